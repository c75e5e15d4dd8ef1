// Package promrw decodes Prometheus remote_write requests, protocol 1.0
// (prometheus.WriteRequest) and 2.0 (io.prometheus.write.v2.Request), by
// hand-rolled protobuf reading over the snappy-decoded body: no generated
// code, no per-sample allocation.
//
// # Wire format
//
// The body is snappy block format (not framed); Decompress checks the
// decoded length (snappy.DecodedLen) against a limit before it allocates,
// and reuses the caller's buffer. The message type comes from the
// Content-Type (ParseContentType): "application/x-protobuf" alone or with
// proto=prometheus.WriteRequest is 1.0, proto=io.prometheus.write.v2.Request
// is 2.0, and anything else is ErrUnsupported, which the handler answers
// with 415.
//
//	1.0  WriteRequest { repeated TimeSeries timeseries = 1; repeated MetricMetadata metadata = 3; }
//	     TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2;
//	                    repeated Exemplar exemplars = 3; repeated Histogram histograms = 4; }
//	     Label        { string name = 1; string value = 2; }
//	     Sample       { double value = 1; int64 timestamp = 2; }
//	2.0  Request      { repeated string symbols = 4; repeated TimeSeries timeseries = 5; }
//	     TimeSeries   { repeated uint32 labels_refs = 1; repeated Sample samples = 2;
//	                    repeated Histogram histograms = 3; repeated Exemplar exemplars = 4;
//	                    Metadata metadata = 5; }
//	     Sample       { double value = 1; int64 timestamp = 2; int64 start_timestamp = 3; }
//
// Fields may come in any order and repeat, as protobuf allows; unknown
// fields are skipped by wire type; packed and unpacked labels_refs are both
// read. A 2.0 body's symbols are indexed in a first pass (8 bytes per
// symbol, so at most 4 bytes per body byte), and symbols[0] must be "".
//
// # Output
//
// Each sample becomes a parse.Point: the __name__ label is the metric, the
// other labels are tags in the order sent, stored losslessly (any
// printable UTF-8, checked with uid.RulesLossless); a label with an empty
// value is dropped, as Prometheus treats it as absent. Values are float64
// with their exact bits (the staleness NaN 0x7ff0000000000002 included);
// timestamps are milliseconds. Native histograms and exemplars are counted
// (Stats) and dropped; metadata is skipped.
//
// # Lazy names
//
// With Options.LazyNames (the daemon's setting), a 1.0 series whose
// labels lie together before its other fields yields its samples with
// Point.Key set to those labels' bytes and its names unread: a consumer
// that already knows the series by that Key (head.NameAppender.AppendKnown)
// appends the sample without reading or checking a label, and calls
// ParseNames only for a Key it does not know. A sender writes a series'
// labels the same way every time, so after its first request a series
// costs a map look-up instead of its labels' parsing. The consumer sees
// what it sees without the option: a bad or malformed series is reported
// as it would be, before any other problem of the series
// (TestLazyNamesAsEager, FuzzLazyNames).
//
// # Errors
//
// A body that is not a valid message stops the Decoder with a
// *DecodeError naming the byte offset (the handler answers 400, and may
// roll back what it appended). A bad series — no __name__, an invalid or
// duplicate label name, a label reference outside the symbols table, more
// than MaxTags tags — or a sample before 1970 is yielded as a *SeriesError
// naming the series' labels, and decoding goes on, so the good series land;
// the handler answers 400 with the errors once the rest is written.
//
// The handler sets X-Prometheus-Remote-Write-Samples-Written to the samples
// it stored, and -Histograms-Written and -Exemplars-Written to 0 while
// they are dropped (Stats has what was received).
//
// # Allocation and lifetime
//
// A Point's names alias the decoded body and are valid until the next
// Next or Reset; the body must not change meanwhile. Steady state
// allocates nothing per series or sample; a SeriesError allocates its text.
package promrw
