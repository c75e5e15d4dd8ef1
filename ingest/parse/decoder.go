package parse

// Decoder is what the body decoders of the HTTP protocols (ingest/putjson,
// ingest/influx, ingest/promrw) have in common, so that the HTTP API
// drains each with one loop:
//
//	for dec.Next() {
//		if err := dec.Bad(); err != nil {
//			// the element is refused; the body goes on
//			continue
//		}
//		// use dec.Point()
//	}
//	err := dec.Err() // nil at the body's end
//
// Each decoder says more, in its protocol's terms, through its own
// methods (a putjson.PointError echoes its data point, an
// influx.LineError names its line).
type Decoder interface {
	// Next advances to the next element (a point or a refused element)
	// and reports whether there is one; false at the end of the body or
	// when the body cannot be read on (Err).
	Next() bool
	// Bad returns why the current element is refused, or nil when it is
	// a point. Valid until the next Next.
	Bad() error
	// Point returns the current point, when Bad is nil. It and its bytes
	// are valid until the next Next.
	Point() *Point
	// Err returns what stopped Next before the body's end, or nil.
	Err() error
}

// NamesDecoder is a Decoder whose points may carry a Key with their
// Metric and Tags not yet read (Point.Key). ParseNames reads them for the
// current point's series; it returns the series' refusal (the element
// is then refused, as Bad would have said, with the rest of the series)
// or, when the body cannot be read on, Err's error. Without a Key it
// does nothing.
type NamesDecoder interface {
	Decoder
	ParseNames() error
}
