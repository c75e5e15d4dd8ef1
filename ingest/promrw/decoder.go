package promrw

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// DefaultMaxTags is the default of Options.MaxTags (tsd.storage.max_tags).
const DefaultMaxTags = 32

// Options configure a Decoder. The zero value is valid after
// EnsureDefaults.
type Options struct {
	// MaxTags bounds a series' labels other than __name__ (with a
	// non-empty value); a series with more is bad. Default 32.
	MaxTags int
	// LazyNames yields the samples of a 1.0 series whose labels come
	// together before any other field with Point.Key set to the labels'
	// bytes and the names unread until ParseNames: a consumer that knows
	// the series by its Key skips reading and checking them (the same
	// sender writes a series' labels the same way every time). Default
	// false: names are read as each series starts.
	LazyNames bool
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
		return fmt.Errorf("promrw: max tags %d < 1", o.MaxTags)
	}
	return nil
}

// Stats count what a Decoder read since its last Reset.
type Stats struct {
	// Series counts TimeSeries messages.
	Series int64
	// Samples counts samples yielded as points.
	Samples int64
	// Histograms and Exemplars count those received (and dropped).
	Histograms, Exemplars int64
	// BadSeries counts series yielded as a SeriesError; BadSamples counts
	// the samples not yielded with them or on their own (before 1970).
	BadSeries, BadSamples int64
}

// metricLabel is Prometheus's metric name label.
var metricLabel = []byte("__name__")

// Decoder yields the samples and bad series of one decoded body at a time.
// Create it with NewDecoder; reuse it (one per worker) to allocate nothing
// in steady state. Not safe for concurrent use.
type Decoder struct {
	opts  Options
	names *parse.Names
	v     Version
	raw   []byte
	pos   int      // next top-level field
	syms  []uint32 // 2.0: start, end of each symbol in raw
	refs  []uint32 // 2.0: label refs of the current series

	ts      []byte // current TimeSeries message
	tsOff   int    // its offset in raw
	sp      int    // next field of ts to look at for a sample
	samples int    // samples in ts
	pt      parse.Point
	lazy    bool   // the current series' names are not read yet (LazyNames)
	mask    uint64 // hashes of the current series' tag keys
	serr    SeriesError
	bad     bool
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

// Reset starts decoding raw, a snappy-decoded body of protocol v. A 2.0
// body's symbols are indexed here; a malformed body shows in Err at once.
func (d *Decoder) Reset(raw []byte, v Version) {
	d.v, d.raw, d.pos = v, raw, 0
	d.ts, d.sp, d.bad, d.err, d.stats = nil, 0, false, nil, Stats{}
	d.syms = d.syms[:0]
	if v == V2 {
		d.indexSymbols()
	}
}

// Next advances to the next sample or bad series and reports whether there
// is one: SeriesError is nil for a sample (Point) and non-nil otherwise.
// It returns false at the end of the body or on a malformed body (Err).
func (d *Decoder) Next() bool {
	d.bad = false
	for d.err == nil {
		if d.ts != nil {
			if d.nextSample() {
				return true
			}
			d.ts = nil
			continue
		}
		if !d.nextSeries() {
			return false
		}
		d.stats.Series++
		if reason := d.startSeries(); reason != "" {
			if d.err != nil {
				return false
			}
			d.failSeries(reason)
			return true
		}
	}
	return false
}

// Point returns the current sample. It and its bytes are valid until the
// next Next or Reset. Meaningless when SeriesError is non-nil.
func (d *Decoder) Point() *parse.Point { return &d.pt }

// SeriesError returns the current bad series or sample, or nil.
func (d *Decoder) SeriesError() *SeriesError {
	if !d.bad {
		return nil
	}
	return &d.serr
}

// Bad returns SeriesError as an error (parse.Decoder).
func (d *Decoder) Bad() error {
	if !d.bad {
		return nil
	}
	return &d.serr
}

var _ parse.NamesDecoder = (*Decoder)(nil)

// Err returns the *DecodeError that stopped the Decoder, if any.
func (d *Decoder) Err() error { return d.err }

// Stats returns the counts since the last Reset.
func (d *Decoder) Stats() Stats { return d.stats }

// IsDecodeError reports whether err is a *DecodeError.
func IsDecodeError(err error) bool {
	var de *DecodeError
	return errors.As(err, &de)
}

func (d *Decoder) fail(off int, msg string) string {
	if d.err == nil {
		d.err = &DecodeError{Version: d.v, Offset: off, Msg: msg}
	}
	return msg
}

// indexSymbols records the bounds of a 2.0 body's symbols.
func (d *Decoder) indexSymbols() {
	for i := 0; i < len(d.raw); {
		f, wt, j, ok := tag(d.raw, i)
		if !ok {
			d.fail(i, "bad field key")
			return
		}
		if f == 4 && wt == wireBytes {
			s, e, ok := lenDelim(d.raw, j)
			if !ok {
				d.fail(j, "symbol overflows the message")
				return
			}
			d.syms = append(d.syms, uint32(s), uint32(e))
			i = e
			continue
		}
		if i = skip(d.raw, j, wt); i < 0 {
			d.fail(j, badField(f, wt))
			return
		}
	}
	if len(d.syms) > 0 && d.syms[0] != d.syms[1] {
		d.fail(int(d.syms[0]), "symbols[0] must be the empty string")
	}
}

// nextSeries finds the next TimeSeries message at the top level.
func (d *Decoder) nextSeries() bool {
	want := uint64(1)
	if d.v == V2 {
		want = 5
	}
	for d.pos < len(d.raw) {
		f, wt, j, ok := tag(d.raw, d.pos)
		if !ok {
			d.fail(d.pos, "bad field key")
			return false
		}
		if f == want && wt == wireBytes {
			s, e, ok := lenDelim(d.raw, j)
			if !ok {
				d.fail(j, "timeseries overflows the message")
				return false
			}
			d.ts, d.tsOff, d.pos = d.raw[s:e], s, e
			return true
		}
		if f == want {
			d.fail(d.pos, "timeseries with wire type "+strconv.Itoa(wt))
			return false
		}
		if d.pos = skip(d.raw, j, wt); d.pos < 0 {
			d.fail(j, badField(f, wt))
			return false
		}
	}
	return false
}

// failSeries makes the current series the current bad item.
func (d *Decoder) failSeries(reason string) {
	d.serr = SeriesError{Reason: reason, Labels: d.seriesLabels()}
	d.bad = true
	d.stats.BadSeries++
	d.stats.BadSamples += int64(d.samples)
	d.ts = nil
}

// nextSample moves to the current series' next sample; false when there
// is none left.
func (d *Decoder) nextSample() bool {
	ts := d.ts
	for d.sp < len(ts) {
		f, wt, j, ok := tag(ts, d.sp)
		if !ok {
			return d.failSample(d.tsOff+d.sp, "bad field key in timeseries")
		}
		if f != 2 || wt != wireBytes {
			if d.sp = skip(ts, j, wt); d.sp < 0 {
				return d.failSample(d.tsOff+j, badField(f, wt)+" in timeseries")
			}
			continue
		}
		s, e, ok := lenDelim(ts, j)
		if !ok {
			return d.failSample(d.tsOff+j, "sample overflows the timeseries")
		}
		d.sp = e
		return d.sample(ts[s:e], d.tsOff+s)
	}
	return false
}

// sample decodes one Sample message into the current point.
func (d *Decoder) sample(m []byte, off int) bool {
	var bits uint64
	var t int64
	for i := 0; i < len(m); {
		f, wt, j, ok := tag(m, i)
		if !ok {
			return d.failSample(off+i, "bad field key in sample")
		}
		switch {
		case f == 1 && wt == wireFixed64:
			bits, i = fixed64(m, j)
		case f == 2 && wt == wireVarint:
			var u uint64
			u, i = uvarint(m, j)
			t = int64(u)
		default:
			i = skip(m, j, wt)
		}
		if i < 0 {
			return d.failSample(off+j, badField(f, wt)+" in sample")
		}
	}
	if t < 0 {
		if d.lazy && d.namesFirst() {
			return d.err == nil
		}
		d.serr = SeriesError{Labels: d.seriesLabels(), Reason: "sample timestamp " + strconv.FormatInt(t, 10) + " is before 1970"}
		d.bad = true
		d.stats.BadSamples++
		return true
	}
	d.pt.Value = series.Point{T: t, Bits: bits, Kind: series.Float64}
	d.stats.Samples++
	return true
}

// failSample stops the body at a malformed sample and returns false,
// unless the series' names, not read yet (LazyNames), are malformed or
// bad: those come first, as when names are read at the series' start.
func (d *Decoder) failSample(off int, msg string) bool {
	if d.lazy && d.namesFirst() {
		return d.err == nil
	}
	d.fail(off, msg)
	return false
}

// namesFirst reads a lazy series' names before one of its samples is
// refused; true when they refuse the series instead (a bad item, or
// d.err when malformed).
func (d *Decoder) namesFirst() bool {
	reason := d.readNames()
	if d.err != nil {
		return true
	}
	if reason != "" {
		d.failSeries(reason)
		return true
	}
	return false
}

// addLabel turns one label into the metric or a tag of the current point;
// it returns why the series is bad, or "".
func (d *Decoder) addLabel(name, value []byte) string {
	if bytes.Equal(name, metricLabel) {
		if d.pt.Metric != nil {
			return "duplicate label __name__"
		}
		if err := d.names.Check(uid.Metric, value); err != nil {
			return err.Error()
		}
		d.pt.Metric = value
		return ""
	}
	if err := d.names.Check(uid.TagK, name); err != nil {
		return err.Error()
	}
	if len(value) == 0 {
		return "" // an empty value is an absent label
	}
	if err := d.names.Check(uid.TagV, value); err != nil {
		return err.Error()
	}
	bit := uint64(1) << ((uint(len(name))*7 + uint(name[0])*3 + uint(name[len(name)-1])) & 63)
	if d.mask&bit != 0 {
		for _, t := range d.pt.Tags {
			if bytes.Equal(t.Key, name) {
				return "duplicate label " + string(name)
			}
		}
	}
	d.mask |= bit
	if len(d.pt.Tags) >= d.opts.MaxTags {
		return "too many labels: more than " + strconv.Itoa(d.opts.MaxTags) + " besides __name__"
	}
	d.pt.AddTag(name, value)
	return ""
}
