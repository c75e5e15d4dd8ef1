package putjson

import (
	"fmt"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/uid"
)

// DefaultMaxTags is the default of Options.MaxTags (tsd.storage.max_tags).
const DefaultMaxTags = 32

// Options configure a Decoder. The zero value is valid after
// EnsureDefaults.
type Options struct {
	// MaxTags bounds a point's tags (tsd.storage.max_tags). Default 32.
	MaxTags int
	// AllowSpecialChars lists characters the name rules accept besides
	// OpenTSDB's (tsd.core.tag.allow_specialchars). Default none.
	AllowSpecialChars string
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MaxTags == 0 {
		o.MaxTags = DefaultMaxTags
	}
	return o
}

// Validate reports the first bad field.
func (o *Options) Validate() error {
	if o.MaxTags < 1 {
		return fmt.Errorf("putjson: max tags %d < 1", o.MaxTags)
	}
	return nil
}

// Decoder yields the data points of one /api/put body at a time. Create it
// with NewDecoder; reuse it (one per worker) to allocate nothing in steady
// state. Not safe for concurrent use.
type Decoder struct {
	opts  Options
	names *parse.Names

	body  []byte
	pos   int
	array bool // the body is an array
	done  bool // no element left (trailing bytes checked)
	n     int  // elements yielded

	pt    parse.Point
	raw   []byte
	elem  element
	buf   []byte // unescaped strings of the current element
	perr  PointError
	bad   bool
	err   error
	stats Stats
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
	d.body, d.pos, d.n, d.done, d.bad, d.err, d.stats = body, 0, 0, false, false, nil, Stats{}
	switch d.peek() {
	case '[':
		d.array = true
		d.pos++
		if d.peek() == ']' {
			d.pos++
			d.finishBody()
		}
	case '{':
		d.array = false
	default:
		d.done = true
		if d.pos >= len(d.body) {
			d.err = &SyntaxError{Offset: d.pos, Msg: "Missing request content"}
			return
		}
		d.fail("The JSON must start as an object or an array")
	}
}

// finishBody ends the body: only spaces may follow.
func (d *Decoder) finishBody() {
	d.done = true
	if d.skipSpace(); d.pos < len(d.body) {
		d.fail("unexpected data after the JSON value")
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
		switch d.peek() {
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
	d.skipSpace()
	start := d.pos
	if !d.element() {
		return false
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

// Raw returns the current element's JSON text, for the details answer.
func (d *Decoder) Raw() []byte { return d.raw }

// Count returns the number of elements read so far.
func (d *Decoder) Count() int { return d.n }

// Err returns the *SyntaxError that stopped the Decoder, if any.
func (d *Decoder) Err() error { return d.err }

// Stats returns the counts since the last Reset.
func (d *Decoder) Stats() Stats { return d.stats }
