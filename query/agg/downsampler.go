package agg

import (
	"math"
	"time"

	"github.com/tsd-db/tsd/series"
)

// downsampler is one series' Downsampler or FillingDownsampler (fill set).
// It reads buckets lazily from a rawSource owned by the caller.
type downsampler struct {
	spec         *Downsample
	acc          Accumulator
	qStart, qEnd int64 // the query range, for All

	init  bool  // the first point has been read and the bucket set up
	has   bool  // nxt is the next unread point
	nxt   point //
	bEnd  int64 // end (exclusive) of the current bucket, not calendar
	bPrev time.Time
	bNext time.Time // calendar bucket [bPrev, bNext)

	fill      bool
	expect    int64 // start of the next bucket a filling downsampler emits
	expectEnd int64 // filling stops at this bucket start
	expCal    time.Time

	vals []float64 // a chunk of the bucket's values for Accumulator.AddFloats

	pre preSource // with pre.b set, buckets come from a Buckets, not raw points
}

// chunk is how many values a downsampler buffers before folding them into
// its accumulator: enough to amortise the dispatch, small per series.
const chunk = 128

// reset prepares d for a series; start and end bound the buckets a filling
// downsampler emits (the aggregation window).
func (d *downsampler) reset(spec *Downsample, qStart, qEnd, start, end int64) {
	acc, vals := d.acc, d.vals
	*d = downsampler{spec: spec, acc: acc, vals: vals, qStart: qStart, qEnd: qEnd}
	if d.vals == nil {
		d.vals = make([]float64, 0, chunk)
	}
	d.acc.Reset(spec.Agg)
	d.fill = spec.Fill != FillNone && !spec.All
	if !d.fill {
		return
	}
	if !spec.Calendar {
		d.expect, d.expectEnd = d.align(start), d.align(end)
		return
	}
	first := calFloor(start, spec.CalendarN, spec.CalendarUnit, spec.loc())
	last := calFloor(end, spec.CalendarN, spec.CalendarUnit, spec.loc())
	if last.Equal(first) {
		last = calStep(last, spec.CalendarN, spec.CalendarUnit)
	}
	d.expCal, d.expect, d.expectEnd = first, first.UnixMilli(), last.UnixMilli()
}

func (d *downsampler) align(t int64) int64 { return t - t%d.spec.Interval }

// seek moves src to the first bucket boundary at or after t, so that the
// first bucket is complete (Downsampler.seekInterval).
func (d *downsampler) seek(src *rawSource, t int64) {
	s := d.spec
	switch {
	case d.pre.b != nil:
		d.pre.i = 0 // the Buckets skipped the same points
	case s.All:
		src.seek(t)
	case s.Calendar:
		c := calFloor(t, s.CalendarN, s.CalendarUnit, s.loc())
		if t > c.UnixMilli() {
			c = calStep(c, s.CalendarN, s.CalendarUnit)
		}
		src.seek(c.UnixMilli())
	default:
		src.seek(d.align(t + s.Interval - 1))
	}
	d.init = false
}

// pull reads the next raw point; All keeps only [qStart, qEnd).
func (d *downsampler) pull(src *rawSource) {
	if !d.spec.All {
		d.nxt, d.has = src.next()
		return
	}
	for {
		p, ok := src.next()
		if !ok || (d.spec.All && p.t >= d.qEnd) {
			d.has = false
			return
		}
		if d.spec.All && p.t < d.qStart {
			continue
		}
		d.has, d.nxt = true, p
		return
	}
}

// initialize reads the first point and opens its bucket.
func (d *downsampler) initialize(src *rawSource) {
	if d.init {
		return
	}
	d.init = true
	if b := d.pre.b; b != nil {
		// has and nxt.t answer stream.hasData: a kept point, and the first.
		d.has, d.nxt = b.kept, point{t: b.first}
		return
	}
	d.pull(src)
	if !d.has || d.spec.All {
		return
	}
	s := d.spec
	if s.Calendar {
		d.bPrev = calFloor(d.nxt.t, s.CalendarN, s.CalendarUnit, s.loc())
		d.bNext = calStep(d.bPrev, s.CalendarN, s.CalendarUnit)
		return
	}
	d.bEnd = d.align(d.nxt.t) + s.Interval
}

// hasValue reports whether the current bucket has an unread point.
func (d *downsampler) hasValue() bool {
	switch {
	case d.pre.b != nil:
		return d.pre.i < len(d.pre.b.out)
	case !d.has:
		return false
	case d.spec.All:
		return true
	case d.spec.Calendar:
		return d.nxt.t < d.bNext.UnixMilli()
	}
	return d.nxt.t < d.bEnd
}

// bucketStart is the current bucket's timestamp.
func (d *downsampler) bucketStart() int64 {
	switch {
	case d.pre.b != nil:
		return d.pre.b.out[d.pre.i].t
	case d.spec.All:
		return d.qStart
	case d.spec.Calendar:
		return d.bPrev.UnixMilli()
	}
	return d.align(d.bEnd - d.spec.Interval)
}

// consume aggregates the current bucket and moves to the bucket of the next
// point; it returns the bucket's timestamp and value.
func (d *downsampler) consume(src *rawSource) (int64, float64) {
	if d.pre.b != nil {
		p := d.pre.b.out[d.pre.i]
		d.pre.i++
		return p.t, p.f64()
	}
	d.acc.Reset(d.spec.Agg)
	end := d.bEnd
	switch {
	case d.spec.All:
		end = math.MaxInt64
	case d.spec.Calendar:
		end = d.bNext.UnixMilli()
	}
	d.fold(src, end)
	t, v := d.bucketStart(), d.acc.Float()
	d.nextBucket()
	return t, v
}

// fold reads the points before end into the accumulator, a chunk at a time.
func (d *downsampler) fold(src *rawSource, end int64) {
	if !d.spec.All && d.has && !src.pending {
		d.foldFast(src, end)
		return
	}
	vals := d.vals[:0]
	for d.has && d.nxt.t < end {
		vals = append(vals, d.nxt.f64())
		if len(vals) == chunk {
			d.acc.AddFloats(vals)
			vals = vals[:0]
		}
		d.pull(src)
	}
	d.acc.AddFloats(vals)
	d.vals = vals[:0]
}

// foldFast is fold reading the iterator directly: the hot loop of every
// downsampled query, one Next and one At per point.
func (d *downsampler) foldFast(src *rawSource, end int64) {
	if d.nxt.t >= end {
		return
	}
	vals := append(d.vals[:0], d.nxt.f64())
	it := src.it
	for {
		if !it.Next() {
			d.has, src.done = false, true
			break
		}
		p := it.At()
		if p.T >= end {
			d.nxt = point{t: p.T, bits: p.Bits, float: p.Kind != series.Int}
			break
		}
		if len(vals) == chunk {
			d.acc.AddFloats(vals)
			vals = vals[:0]
		}
		vals = append(vals, p.Float())
	}
	d.acc.AddFloats(vals)
	d.vals = vals[:0]
}

// nextBucket opens the bucket holding the next point (resetEndOfInterval).
func (d *downsampler) nextBucket() {
	s := d.spec
	switch {
	case !d.has || s.All:
	case s.Calendar:
		for d.nxt.t >= d.bNext.UnixMilli() {
			d.bPrev = calStep(d.bPrev, s.CalendarN, s.CalendarUnit)
			d.bNext = calStep(d.bNext, s.CalendarN, s.CalendarUnit)
		}
	default:
		d.bEnd = d.align(d.nxt.t) + s.Interval
	}
}

// next returns the next downsampled point.
func (d *downsampler) next(src *rawSource) (point, bool) {
	if d.fill {
		return d.nextFilled(src)
	}
	d.initialize(src)
	if !d.hasValue() {
		return point{}, false
	}
	t, v := d.consume(src)
	return floatPt(t, v), true
}

// nextFilled emits every bucket from the window's start to its end: the
// data bucket when one starts there, the fill value otherwise. Data buckets
// before the expected one are read and dropped.
func (d *downsampler) nextFilled(src *rawSource) (point, bool) {
	if d.expect >= d.expectEnd {
		return point{}, false
	}
	d.initialize(src)
	for d.hasValue() && d.bucketStart() < d.expect {
		d.consume(src)
	}
	t := d.expect
	v := d.fillValue()
	if d.hasValue() && d.bucketStart() == t {
		_, v = d.consume(src)
	}
	d.advanceExpect()
	return floatPt(t, v), true
}

func (d *downsampler) fillValue() float64 {
	switch d.spec.Fill {
	case FillZero:
		return 0
	case FillScalar:
		return d.spec.FillValue
	}
	return math.NaN()
}

func (d *downsampler) advanceExpect() {
	s := d.spec
	if !s.Calendar {
		d.expect += s.Interval
		return
	}
	d.expCal = calStep(d.expCal, s.CalendarN, s.CalendarUnit)
	d.expect = d.expCal.UnixMilli()
}
