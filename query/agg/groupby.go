package agg

import (
	"errors"
	"math"

	"github.com/tsd-db/tsd/series"
)

// ErrNoneGroup is returned when the none aggregator is asked to merge more
// than one series (OpenTSDB's IllegalDataException "More than one value").
var ErrNoneGroup = errors.New("agg: the none aggregator takes one series per group")

// errNotPushed refuses NewGroupByBuckets a spec Buckets cannot compute.
var errNotPushed = errors.New("agg: GroupByBuckets needs a fixed-interval or all downsampling")

// slot is what GroupBy knows of one series: its current point (the last one
// consumed) and the next one. A series is active from its first consumed
// point to its last (OpenTSDB's timestamps/values arrays).
type slot struct {
	cur, nxt     point
	curOK, nxtOK bool
}

// floats counts the slot's visible float points (current and next).
func (sl *slot) floats() int {
	n := 0
	if sl.curOK && sl.cur.float {
		n++
	}
	if sl.nxtOK && sl.nxt.float {
		n++
	}
	return n
}

// GroupBy merges the series of one group into a single series with the
// group aggregator, interpolating each series at the timestamps where it has
// no point (OpenTSDB's AggregationIterator), after each series' downsampling
// and rate. It implements series.Iterator; points come out in time order,
// clipped to [QueryStart, QueryEnd]. It reads its inputs lazily and holds two
// points per series. Not safe for concurrent use.
type GroupBy struct {
	spec    Spec
	streams []stream
	slots   []slot
	acc     Accumulator
	floats  int // float points among all slots' current and next points
	started bool
	have    bool // out is a point Next returned
	out     series.Point
	err     error

	// NewGroupByBuckets' placeholder inputs.
	emptyIters []series.SliceIterator
	iters      []series.Iterator
}

// NewGroupBy returns a GroupBy over inputs, reusing reuse's buffers when not
// nil. The spec is validated here; an invalid one surfaces from Err.
func NewGroupBy(reuse *GroupBy, spec Spec, inputs []series.Iterator) *GroupBy {
	g := reuse
	if g == nil {
		g = &GroupBy{}
	}
	spec.EnsureDefaults()
	g.spec, g.started, g.have, g.err, g.out = spec, false, false, nil, series.Point{}
	if g.err = spec.Validate(); g.err != nil {
		return g
	}
	if spec.Agg.IsNone() && len(inputs) > 1 {
		g.err = ErrNoneGroup
		return g
	}
	g.acc.Reset(spec.Agg)
	g.floats = 0
	g.streams = resize(g.streams, len(inputs))
	g.slots = resize(g.slots, len(inputs))
	for i, it := range inputs {
		g.streams[i].reset(it, &g.spec)
		g.slots[i] = slot{}
	}
	return g
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// start seeks every series to the window's start and loads its first point;
// a series without raw points in the window (OpenTSDB's SpanGroup never
// holds one), or whose first point precedes the start, is dropped. With a rate the
// first rate is consumed at once, as OpenTSDB does.
func (g *GroupBy) start() {
	g.started = true
	for i := range g.streams {
		st, sl := &g.streams[i], &g.slots[i]
		st.seek(g.spec.Start, g.spec.RateOptions)
		if !st.hasData(g.spec.End) {
			g.fail(st)
			continue
		}
		p, ok := st.next()
		if g.fail(st) {
			return
		}
		if !ok || p.t < g.spec.Start {
			continue
		}
		sl.nxt, sl.nxtOK = p, true
		g.floats += sl.floats()
		if g.spec.Rate {
			g.advance(i)
		}
	}
}

// fail records a series' error and reports whether there was one.
func (g *GroupBy) fail(st *stream) bool {
	if st.err != nil && g.err == nil {
		g.err = st.err
	}
	return g.err != nil
}

// advance makes series i's next point its current one and reads another.
func (g *GroupBy) advance(i int) {
	sl, st := &g.slots[i], &g.streams[i]
	g.floats -= sl.floats()
	sl.cur, sl.curOK = sl.nxt, true
	sl.nxt, sl.nxtOK = st.next()
	g.floats += sl.floats()
	g.fail(st)
}

// Next moves to the next output point.
func (g *GroupBy) Next() bool {
	if !g.started {
		g.start()
	}
	g.have = false
	for g.err == nil {
		x, ok := g.step()
		if !ok || g.err != nil || x > g.spec.QueryEnd {
			// Timestamps only grow: nothing after QueryEnd is emitted, so
			// the rest of the window is not read.
			return false
		}
		if x >= g.spec.QueryStart {
			g.out, g.have = g.value(x), true
			return true
		}
	}
	return false
}

// step retires the series that ended, finds the earliest next timestamp in
// the window and consumes it in every series that has it.
func (g *GroupBy) step() (int64, bool) {
	x, found := int64(math.MaxInt64), false
	for i := range g.slots {
		sl := &g.slots[i]
		if !sl.nxtOK {
			if sl.curOK && sl.cur.float {
				g.floats--
			}
			sl.curOK = false
			continue
		}
		if sl.nxt.t <= g.spec.End && sl.nxt.t < x {
			x, found = sl.nxt.t, true
		}
	}
	if !found {
		return 0, false
	}
	for i := range g.slots {
		if sl := &g.slots[i]; sl.nxtOK && sl.nxt.t == x {
			g.advance(i)
		}
	}
	return x, true
}

// value aggregates every active series at x; a group of one series
// skips the accumulator where floatOne can.
func (g *GroupBy) value(x int64) series.Point {
	if len(g.slots) == 1 && g.slots[0].curOK && !g.integral() {
		if f, ok := floatOne(g.spec.Agg, g.lerpFloat(&g.slots[0], x)); ok {
			return series.Float64Point(x, f)
		}
	}
	g.acc.Reset(g.spec.Agg)
	if g.integral() {
		for i := range g.slots {
			if g.slots[i].curOK {
				g.acc.AddInt(g.lerpInt(&g.slots[i], x))
			}
		}
		return series.IntPoint(x, g.acc.Int())
	}
	for i := range g.slots {
		if g.slots[i].curOK {
			g.acc.AddFloat(g.lerpFloat(&g.slots[i], x))
		}
	}
	return series.Float64Point(x, g.acc.Float())
}

// integral reports whether the integer path applies: no rate and no float
// among the current and next points of any series.
func (g *GroupBy) integral() bool {
	return !g.spec.Rate && g.floats == 0
}

// lerpInt is series sl's value at x on the integer path.
func (g *GroupBy) lerpInt(sl *slot, x int64) int64 {
	y0 := sl.cur.i64()
	if sl.cur.t == x || !sl.nxtOK {
		return y0
	}
	x0, x1, y1 := sl.cur.t, sl.nxt.t, sl.nxt.i64()
	if x == x1 {
		return y1
	}
	switch g.spec.Agg.interp {
	case ZIM:
		return 0
	case Max:
		return math.MaxInt64
	case Min:
		return math.MinInt64
	case Prev:
		return y0
	}
	return y0 + (x-x0)*(y1-y0)/(x1-x0)
}

// lerpFloat is series sl's value at x on the float path; rates are never
// interpolated, the previous rate stands.
func (g *GroupBy) lerpFloat(sl *slot, x int64) float64 {
	y0 := sl.cur.f64()
	if sl.cur.t == x || g.spec.Rate || !sl.nxtOK {
		return y0
	}
	x0, x1, y1 := sl.cur.t, sl.nxt.t, sl.nxt.f64()
	if x == x1 {
		return y1
	}
	switch g.spec.Agg.interp {
	case ZIM:
		return 0
	case Max:
		return math.MaxFloat64
	case Min:
		return -math.MaxFloat64
	case Prev:
		return y0
	}
	return y0 + float64(x-x0)*(y1-y0)/float64(x1-x0)
}

// SeekTime moves to the first output point at or after t.
func (g *GroupBy) SeekTime(t int64) bool {
	if g.have && g.out.T >= t {
		return true
	}
	for g.Next() {
		if g.out.T >= t {
			return true
		}
	}
	return false
}

// At returns the current output point: an Int point on the integer path, a
// Float64 point (NaN for an empty filled bucket) otherwise.
func (g *GroupBy) At() series.Point { return g.out }

// Err returns the error that stopped the iteration: an invalid spec, a
// series' read error, or ErrTimestampOrder from a rate.
func (g *GroupBy) Err() error { return g.err }
