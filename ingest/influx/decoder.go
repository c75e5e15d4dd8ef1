package influx

import (
	"fmt"
	"io"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// Stats count what a Decoder saw since its last Reset.
type Stats struct {
	// Lines counts lines holding a point (not blank, not comments),
	// good or bad.
	Lines int64
	// BadLines counts lines yielded as a LineError.
	BadLines int64
	// Points counts points yielded.
	Points int64
	// StringFields counts string field values skipped.
	StringFields int64
}

// field is one numeric field of the current line.
type field struct {
	key []byte
	val series.Point
}

// Decoder yields the points and bad lines of one body at a time. Create it
// with NewDecoder, start each body with Reset or ResetReader. Not safe for
// concurrent use; reuse it (one per connection or worker) to allocate
// nothing in steady state.
type Decoder struct {
	opts  Options
	names *parse.Names
	lr    parse.LineReader
	prec  Precision
	now   int64 // default time (ms), truncated to prec

	fields  []field
	fi      int    // next field of the current line to yield
	metric  []byte // measurement + separator, then the field key
	prefix  int    // length of measurement + separator in metric
	key     []byte // the point's Key: 'I', the line up to its fields, 0, the field key
	keyLen  int    // length of key before the field key
	esc     []byte // unescaped names of the current line
	tagMask uint64 // hashes of the current line's tag keys (addTag)
	pt      parse.Point
	lerr    LineError
	bad     bool // the current item is a bad line
	stats   Stats
	err     error
}

// NewDecoder returns a decoder; opts may be nil for the defaults.
func NewDecoder(opts *Options) (*Decoder, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	return &Decoder{opts: o, names: parse.NewNames(uid.NewValidator(uid.RulesLossless, ""))}, nil
}

// Reset starts decoding body (not copied). prec is the request's timestamp
// precision; now (ms since the epoch) is the time of lines without one.
func (d *Decoder) Reset(body []byte, prec Precision, now int64) {
	d.start(prec, now)
	d.lr.Reset(body, d.opts.MaxLineBytes)
}

// ResetReader starts decoding a stream (a chunked or decompressed body)
// through the Decoder's reused buffer.
func (d *Decoder) ResetReader(r io.Reader, prec Precision, now int64) {
	d.start(prec, now)
	d.lr.ResetReader(r, d.opts.MaxLineBytes)
}

func (d *Decoder) start(prec Precision, now int64) {
	if prec <= 0 {
		prec = Nanosecond
	}
	d.prec, d.now = prec, prec.truncate(now)
	d.fields, d.fi = d.fields[:0], 0
	d.bad, d.err, d.stats = false, nil, Stats{}
}

// Next advances to the next point or bad line and reports whether there
// is one. After it returns true, LineError is nil for a point (Point) and
// non-nil for a bad line. It returns false at the end of the body or on a
// read error (Err).
func (d *Decoder) Next() bool {
	d.bad = false
	for {
		if d.fi < len(d.fields) {
			d.emit()
			return true
		}
		d.fields, d.fi = d.fields[:0], 0
		if !d.lr.Next() {
			d.err = d.lr.Err()
			return false
		}
		if d.readLine() {
			return true
		}
	}
}

// readLine parses the reader's current line; it returns true when the line
// is bad (the item to yield), false when it was skipped or parsed (its
// fields, possibly none, are then yielded by Next).
func (d *Decoder) readLine() bool {
	line := d.lr.Line()
	start := skipBlank(line, 0)
	if start == len(line) || line[start] == '#' {
		return false
	}
	d.stats.Lines++
	if d.lr.TooLong() {
		return d.fail(line, start, fmt.Sprintf("line too long: more than %d bytes", d.opts.MaxLineBytes))
	}
	reason := d.parseLine(line[start:])
	if reason == openQuote {
		// A string field holds a newline: join lines until its quote
		// closes, scanning only the new bytes, then parse once more.
		if line, reason = d.joinLines(start), reasonUnbalancedQuotes; line != nil {
			if reason = d.parseLine(line[start:]); reason == openQuote {
				reason = reasonUnbalancedQuotes
			}
		} else {
			line = d.lr.Line()
		}
	}
	if reason != "" {
		return d.fail(line, start, reason)
	}
	return false
}

// joinLines extends the current line until its string fields are closed
// and returns it, or rewinds it and returns nil when the body or the line
// limit ends first (the lines after it are then read as lines again).
func (d *Decoder) joinLines(start int) []byte {
	var q quoteScan
	line := d.lr.Line()
	for !q.scan(line[start:]) {
		if !d.lr.Extend() {
			d.lr.Rewind()
			return nil
		}
		line = d.lr.Line()
	}
	return line
}

func (d *Decoder) fail(line []byte, start int, reason string) bool {
	text := line[start:]
	d.lerr = LineError{Line: d.lr.Num(), Text: text, Reason: reason, Truncated: d.lr.TooLong()}
	if len(text) > MaxErrorText {
		d.lerr.Text, d.lerr.Truncated = text[:MaxErrorText], true
	}
	d.fields = d.fields[:0]
	d.bad = true
	d.stats.BadLines++
	return true
}

// emit makes the next field of the current line the current point.
func (d *Decoder) emit() {
	f := &d.fields[d.fi]
	d.fi++
	d.metric = append(d.metric[:d.prefix], f.key...)
	d.pt.Metric = d.metric
	d.key = append(d.key[:d.keyLen], f.key...)
	d.pt.Key = d.key
	d.pt.Value = f.val
	d.stats.Points++
}

// Point returns the current point. It and its bytes are valid until the
// next Next or Reset. Meaningless when LineError is non-nil.
func (d *Decoder) Point() *parse.Point { return &d.pt }

// LineError returns the current bad line, or nil when the current item is
// a point. Valid until the next Next or Reset; Clone it to keep it.
func (d *Decoder) LineError() *LineError {
	if !d.bad {
		return nil
	}
	return &d.lerr
}

// Bad returns LineError as an error (parse.Decoder).
func (d *Decoder) Bad() error {
	if !d.bad {
		return nil
	}
	return &d.lerr
}

var _ parse.Decoder = (*Decoder)(nil)

// Err returns the read error that stopped the Decoder, if any.
func (d *Decoder) Err() error { return d.err }

// Stats returns the counts since the last Reset.
func (d *Decoder) Stats() Stats { return d.stats }
