package promql

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/series"
)

// TestPushdownOf: the window plan of a Select's hints, or none.
func TestPushdownOf(t *testing.T) {
	marked := WithPushdown(context.Background(), nil, nil) // nil node: not marked
	if PushdownMarked(marked) {
		t.Fatal("WithPushdown(nil) marked")
	}
	ctx := context.WithValue(context.Background(), pushdownKey{}, true)
	h := func(fn string, start, end, step, rng int64) *storage.SelectHints {
		return &storage.SelectHints{Func: fn, Start: start, End: end, Step: step, Range: rng}
	}
	for _, c := range []struct {
		h     *storage.SelectHints
		count bool // the Select is in count mode
		want  *pushdown
	}{
		// A range query over [1000, 5000] step 1000, range 1000.
		{h("max_over_time", 1, 5000, 1000, 1000), false, &pushdown{fn: fnMax, first: 1000, last: 5000, step: 1000, rng: 1000}},
		// Step > range: the last window end is the last step at or before End.
		{h("sum_over_time", 501, 5400, 2000, 500), false, &pushdown{fn: fnSum, first: 1000, last: 5000, step: 2000, rng: 500}},
		// Instant query: one window ending at End.
		{h("avg_over_time", 4001, 5000, 0, 1000), false, &pushdown{fn: fnAvg, first: 5000, last: 5000, rng: 1000}},
		// Step < range but a single window (@).
		{h("last_over_time", 4001, 5000, 10, 1000), false, &pushdown{fn: fnLast, first: 5000, last: 5000, rng: 1000}},
		{h("max_over_time", 1, 5000, 999, 1000), false, nil},     // overlapping windows
		{h("count_over_time", 1, 5000, 1000, 1000), false, nil},  // not idempotent
		{h("max_over_time", 1, 5000, 1000, 0), false, nil},       // not a range
		{h("max_over_time", 4001, 6000, 0, 1000), false, nil},    // step 0, several windows?
		{h("max_over_time", 4001, 4999, 1000, 1000), false, nil}, // first window past End
		// Count mode: sum_over_time (what count_over_time became) is a
		// count; nothing else is pushed down.
		{h("sum_over_time", 501, 5400, 2000, 500), true, &pushdown{fn: fnCount, first: 1000, last: 5000, step: 2000, rng: 500}},
		{h("max_over_time", 1, 5000, 1000, 1000), true, nil},
		{h("sum_over_time", 1, 5000, 999, 1000), true, nil},
		{nil, false, nil},
	} {
		got := pushdownOf(ctx, c.h, c.count)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%+v: %+v, want %+v", c.h, got, c.want)
		}
		if c.h != nil && pushdownOf(context.Background(), c.h, c.count) != nil {
			t.Errorf("%+v: pushed down on an unmarked context", c.h)
		}
	}
}

// TestWindowIterator: windows (e-rng, e], empty ones skipped, staleness
// markers dropped, Seek to a window end or between windows, never back.
func TestWindowIterator(t *testing.T) {
	stale := series.Point{T: 0, Bits: series.StaleNaN, Kind: series.Float64}
	pt := func(t int64, v float64) series.Point { return series.Float64Point(t, v) }
	at := func(t int64) series.Point { s := stale; s.T = t; return s }
	pts := []series.Point{
		pt(1, 5), pt(10, 7), // window 10
		at(15),                                                // window 20: only a marker, empty
		pt(31, 1), pt(33, math.NaN()), series.IntPoint(40, 4), // window 40 (30 empty)
		pt(70, 2), // window 70
	}
	pd := &pushdown{fn: fnMax, first: 10, last: 80, step: 10, rng: 10}
	var w windowIter
	w.reset(series.NewSliceIterator(nil, pts), pd)
	type tv struct {
		t int64
		v float64
	}
	var got []tv
	for w.Next() == chunkenc.ValFloat {
		tt, v := w.At()
		got = append(got, tv{tt, v})
	}
	want := []tv{{10, 7}, {40, 4}, {70, 2}}
	if len(got) != len(want) {
		t.Fatalf("windows %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("windows %v, want %v", got, want)
		}
	}
	w.reset(series.NewSliceIterator(nil, pts), pd)
	if w.Seek(25) != chunkenc.ValFloat || w.AtT() != 40 {
		t.Fatalf("Seek(25) at %d, want 40", w.AtT())
	}
	if w.Seek(12) != chunkenc.ValFloat || w.AtT() != 40 {
		t.Fatalf("Seek back moved to %d", w.AtT())
	}
	if w.Seek(71) != chunkenc.ValNone {
		t.Fatalf("Seek(71) found %d", w.AtT())
	}
	// The staleness marker's bits never come out of a window.
	pd = &pushdown{fn: fnLast, first: 10, last: 10, rng: 10}
	w.reset(series.NewSliceIterator(nil, []series.Point{pt(5, math.Float64frombits(value.StaleNaN))}), pd)
	if w.Next() != chunkenc.ValNone {
		t.Fatal("a window of a staleness marker is not empty")
	}
}

// TestStaleFill: a window selector's stream gets a staleness marker at
// each empty window end within the lookback of its last sample, and no
// other; Seek stays put on a sample at or after its target.
func TestStaleFill(t *testing.T) {
	pd := &pushdown{fn: fnAvg, first: 10, last: 80, step: 10, rng: 10}
	src := &samplesIter{}
	src.reset([]sample{{10, 1}, {30, 2}, {60, 3}})
	var f staleFill
	f.reset(src, pd, 25) // a sample fills the two next steps
	type got struct {
		t     int64
		stale bool
		v     float64
	}
	var out []got
	for f.Next() == chunkenc.ValFloat {
		ts, v := f.At()
		out = append(out, got{ts, value.IsStaleNaN(v), v})
	}
	want := []got{{10, false, 1}, {20, true, 0}, {30, false, 2}, {40, true, 0}, {50, true, 0}, {60, false, 3}, {70, true, 0}, {80, true, 0}}
	if len(out) != len(want) {
		t.Fatalf("got %v, want %v", out, want)
	}
	for i := range want {
		if out[i].t != want[i].t || out[i].stale != want[i].stale || (!want[i].stale && out[i].v != want[i].v) {
			t.Fatalf("sample %d: got %v, want %v", i, out[i], want[i])
		}
	}
	if f.Next() != chunkenc.ValNone || f.Seek(10) != chunkenc.ValNone || f.Err() != nil {
		t.Fatal("not exhausted")
	}
	src.reset([]sample{{10, 1}, {30, 2}, {60, 3}})
	f.reset(src, pd, 15)
	if f.Seek(35) != chunkenc.ValFloat || f.AtT() != 40 {
		t.Fatalf("Seek(35) at %d, want the marker at 40", f.AtT())
	}
	if f.Seek(40) != chunkenc.ValFloat || f.AtT() != 40 {
		t.Fatalf("Seek(40) moved to %d", f.AtT())
	}
	if f.Seek(41) != chunkenc.ValFloat || f.AtT() != 60 {
		t.Fatalf("Seek(41) at %d, want 60 (50 is beyond the lookback of 30)", f.AtT())
	}
}

// extremeRef is max_over_time's and min_over_time's loop as Prometheus
// v0.310's functions.go runs it, point by point (greater for max): the
// rule addMax and addMin must reach however they fold runs of integers.
func extremeRef(pts []series.Point, e int64, greater bool) (float64, float64, int) {
	var v, n float64
	i := 0
	for ; i < len(pts) && pts[i].T <= e; i++ {
		p := &pts[i]
		if isStale(p) {
			continue
		}
		f := p.Float()
		if n == 0 || math.IsNaN(v) || (greater && f > v) || (!greater && f < v) {
			v = f
		}
		n++
	}
	return v, n, i
}

// TestExtremeRunsExact: addMax and addMin, which fold runs of integers
// at once, give the point-by-point loop's value bit for bit (-0 against
// 0, NaN, infinities, staleness markers among integers), count and
// stopping place, over random windows of mixed points.
func TestExtremeRunsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	floats := []float64{math.Copysign(0, -1), 0, 1, -1, 2.5, math.NaN(), math.Inf(1), math.Inf(-1), -3}
	point := func(ts int64) series.Point {
		switch rng.IntN(4) {
		case 0:
			return series.Point{T: ts, Kind: series.Float64, Bits: series.StaleNaN}
		case 1:
			return series.Point{T: ts, Kind: series.Float64, Bits: math.Float64bits(floats[rng.IntN(len(floats))])}
		}
		return series.Point{T: ts, Kind: series.Int, Bits: uint64(rng.Int64N(7) - 3)}
	}
	for range 20000 {
		pts := make([]series.Point, rng.IntN(12))
		for i := range pts {
			pts[i] = point(int64(i) * 10)
		}
		e := rng.Int64N(130) - 5
		for _, greater := range []bool{true, false} {
			var a agg
			a.v, a.n = rng.Float64(), float64(rng.IntN(2)) // a window begun in a previous batch, or not
			if rng.IntN(5) == 0 {
				a.v = math.NaN()
			}
			if a.n == 0 {
				a.v = 0 // an empty window's state, as a new agg's
			}
			want := a
			wv, wn, wi := extremeRef(pts, e, greater)
			if want.n > 0 {
				// The reference starts empty: give it the state's value first.
				wv, wn, wi = extremeRef(append([]series.Point{{T: math.MinInt64, Kind: series.Float64, Bits: math.Float64bits(a.v)}}, pts...), e, greater)
				wn--
				wi--
			}
			var gi int
			if greater {
				gi = a.addMax(pts, e)
			} else {
				gi = a.addMin(pts, e)
			}
			if math.Float64bits(a.v) != math.Float64bits(wv) && !(math.IsNaN(a.v) && math.IsNaN(wv)) || a.n != wn+want.n || gi != wi {
				t.Fatalf("max %v over %v to %d from (%v, %v): got (%v, %v, %d), want (%v, %v, %d)",
					greater, pts, e, want.v, want.n, a.v, a.n, gi, wv, wn+want.n, wi)
			}
		}
	}
}

// TestUpTo: upTo counts the points at or before e, whatever the spacing:
// even (where its first guess lands), uneven, with gaps, and for e before,
// between, on and after the points; also at int64's ends, where the
// guess's arithmetic overflows and only the checks after it count.
func TestUpTo(t *testing.T) {
	ends := []series.Point{{T: math.MinInt64}, {T: -1}, {T: 0}, {T: math.MaxInt64 - 1}, {T: math.MaxInt64}}
	for _, e := range []int64{math.MinInt64, -2, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64} {
		for lo := range ends {
			for hi := lo; hi <= len(ends); hi++ {
				pts, want := ends[lo:hi], 0
				for _, p := range pts {
					if p.T <= e {
						want++
					}
				}
				if got := upTo(pts, e); got != want {
					t.Fatalf("upTo(%v, %d) = %d, want %d", pts, e, got, want)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := r.IntN(40)
		pts := make([]series.Point, n)
		ts := int64(r.IntN(100))
		for i := range pts {
			pts[i].T = ts
			switch trial % 3 {
			case 0: // a fixed interval
				ts += 10
			case 1: // jitter
				ts += 1 + int64(r.IntN(20))
			default: // a gap now and then
				ts += 1 + int64(r.IntN(3))
				if r.IntN(8) == 0 {
					ts += 500
				}
			}
		}
		for range 20 {
			e := int64(r.IntN(int(ts)+200)) - 100
			want := 0
			for _, p := range pts {
				if p.T <= e {
					want++
				}
			}
			if got := upTo(pts, e); got != want {
				t.Fatalf("trial %d: upTo(%v, %d) = %d, want %d", trial, pts, e, got, want)
			}
		}
	}
}
