package putjson

import (
	"fmt"
	"io"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/uid"
)

// DefaultMaxTags is the default of Options.MaxTags (tsd.storage.max_tags).
const DefaultMaxTags = 32

// MaxListedTags is how many tags of a point a "Too many tags" error lists
// and its echo shows, as OpenTSDB lists them all; a point with more (an
// element of MaxElementBytes holds up to about 170,000) is counted in full
// and echoed as sent, so that a hostile element costs no more memory or
// time than one with this many tags.
const MaxListedTags = 1024

// DefaultMaxElementBytes is the default of Options.MaxElementBytes, the
// Influx line limit: a data point is a few hundred bytes.
const DefaultMaxElementBytes = 1 << 20

// Options configure a Decoder. The zero value is valid after
// EnsureDefaults.
type Options struct {
	// MaxTags bounds a point's tags (tsd.storage.max_tags). Default 32.
	MaxTags int
	// AllowSpecialChars lists characters the name rules accept besides
	// OpenTSDB's (tsd.core.tag.allow_specialchars). Default none.
	AllowSpecialChars string
	// MaxElementBytes bounds one data point (array element) read with
	// ResetReader, and so the Decoder's window: a longer one stops the
	// Decoder with a *TooLargeError. Bodies given to Reset are not
	// bounded. Default DefaultMaxElementBytes.
	MaxElementBytes int
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MaxTags == 0 {
		o.MaxTags = DefaultMaxTags
	}
	if o.MaxElementBytes == 0 {
		o.MaxElementBytes = DefaultMaxElementBytes
	}
	return o
}

// Validate reports the first bad field.
func (o *Options) Validate() error {
	if o.MaxTags < 1 {
		return fmt.Errorf("putjson: max tags %d < 1", o.MaxTags)
	}
	if o.MaxElementBytes < 1 {
		return fmt.Errorf("putjson: max element bytes %d < 1", o.MaxElementBytes)
	}
	return nil
}

// Decoder yields the data points of one /api/put body at a time. Create it
// with NewDecoder; reuse it (one per worker) to allocate nothing in steady
// state. Not safe for concurrent use.
type Decoder struct {
	opts  Options
	names *parse.Names

	body  []byte // the body, or in reader mode the window (see reader.go)
	pos   int
	rd    reader // reader mode state; rd.r is nil for Reset
	array bool   // the body is an array
	done  bool   // no element left (trailing bytes checked)
	n     int    // elements yielded

	pt    parse.Point
	raw   []byte
	elem  element
	buf   []byte // unescaped strings of the current element
	order []int  // AppendEcho's scratch
	perr  PointError
	bad   bool
	err   error
	stats Stats
	histo bool // /api/histogram's fields and checks (SetHistogram)
}

// Stats count what a Decoder read since its last Reset.
type Stats struct {
	Points, BadPoints int64
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
	return &Decoder{opts: o, names: parse.NewNames(uid.NewValidator(uid.RulesOpenTSDB, o.AllowSpecialChars))}, nil
}

// Reset starts decoding body (not copied). An empty body or one that is
// not an object or array shows in Err at once (OpenTSDB's "Missing request
// content" and "The JSON must start as an object or an array").
func (d *Decoder) Reset(body []byte) {
	d.histo = false
	d.rd.reset(nil)
	d.body = body
	d.start()
}

// ResetReader starts decoding the body read from r (a chunked or
// decompressed request body) through the Decoder's reused window, which
// holds one element at a time: memory is bounded by MaxElementBytes, not
// by the body. A read error stops the Decoder and is its Err, unwrapped.
func (d *Decoder) ResetReader(r io.Reader) {
	d.histo = false
	d.rd.reset(r)
	d.body = d.rd.win[:0]
	d.start()
}

func (d *Decoder) start() {
	d.pos, d.n, d.done, d.bad, d.err, d.stats = 0, 0, false, false, nil, Stats{}
	switch d.peekMore() {
	case '[':
		d.array = true
		d.pos++
		if d.peekMore() == ']' {
			d.pos++
			d.finishBody()
		}
	case '{':
		d.array = false
	default:
		d.done = true
		if d.pos >= len(d.body) {
			d.err = d.rd.err
			if d.err == nil {
				d.err = &SyntaxError{Offset: d.offset(), Msg: "Missing request content"}
			}
			return
		}
		d.fail(MsgNotObjectOrArray)
	}
}

// finishBody ends the body: only spaces may follow.
func (d *Decoder) finishBody() {
	d.done = true
	if d.skipSpace(); d.pos < len(d.body) {
		d.fail("unexpected data after the JSON value")
		return
	}
	if d.rd.r != nil {
		d.trailing()
	}
}

// Next advances to the next data point and reports whether there is one:
// PointError is nil for a valid point (Point) and non-nil otherwise. It
// returns false at the end of the body or on a syntax error (Err).
func (d *Decoder) Next() bool {
	d.bad = false
	if d.done || d.err != nil {
		return false
	}
	if d.array && d.n > 0 {
		switch d.peekMore() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.finishBody()
			return false
		default:
			return d.fail("expected ',' or ']' after an array element")
		}
	}
	d.peekMore()
	start := d.pos
	d.rd.inElem = d.rd.r != nil
	ok := d.element()
	for d.rd.inElem && d.cut(ok) {
		// The element may go on past the window: parse it again with
		// more of the stream.
		if start, ok = d.refill(start); !ok {
			d.rd.inElem = false
			return false
		}
		d.pos, d.err = start, nil
		ok = d.element()
	}
	d.rd.inElem = false
	if !ok {
		return false
	}
	if d.rd.r != nil && d.pos-start > d.opts.MaxElementBytes {
		return d.tooLarge(start)
	}
	d.raw = d.body[start:d.pos]
	d.n++
	if !d.array {
		d.finishBody()
		if d.err != nil {
			return false
		}
	}
	d.point()
	return true
}

// Point returns the current point. It and its bytes are valid until the
// next Next or Reset. Meaningless when PointError is non-nil.
func (d *Decoder) Point() *parse.Point { return &d.pt }

// PointError returns why the current point is refused, or nil.
func (d *Decoder) PointError() *PointError {
	if !d.bad {
		return nil
	}
	return &d.perr
}

// Bad returns PointError as an error (parse.Decoder).
func (d *Decoder) Bad() error {
	if !d.bad {
		return nil
	}
	return &d.perr
}

var _ parse.Decoder = (*Decoder)(nil)

// RollupFields returns the current point's /api/rollup fields, OpenTSDB's
// RollUpDataPoint: interval, aggregator and groupByAggregator as sent
// (empty when absent or null), and whether groupByAggregator was given
// and not null. Valid until Next.
func (d *Decoder) RollupFields() (interval, agg, groupBy []byte, hasGroupBy bool) {
	e := &d.elem
	return e.interval, e.agg, e.groupBy, e.groupByKind != kindNone && e.groupByKind != kindNull
}

// Timestamp returns the current point's timestamp as sent, in seconds or
// milliseconds (0 when absent).
func (d *Decoder) Timestamp() int64 {
	ts, _ := timestamp(d.elem.ts, d.elem.tsKind)
	return ts
}

// Raw returns the current element's JSON text, for the details answer.
func (d *Decoder) Raw() []byte { return d.raw }

// Count returns the number of elements read so far.
func (d *Decoder) Count() int { return d.n }

// Err returns what stopped the Decoder, if anything: a *SyntaxError, a
// *TooLargeError or, in reader mode, the reader's error.
func (d *Decoder) Err() error { return d.err }

// InputLen returns the number of body bytes read so far: the body's
// length after Reset; 0 in reader mode means the body was empty.
func (d *Decoder) InputLen() int { return d.rd.base + len(d.body) }

// offset returns the body offset of d.pos.
func (d *Decoder) offset() int { return d.rd.base + d.pos }

// Stats returns the counts since the last Reset.
func (d *Decoder) Stats() Stats { return d.stats }
