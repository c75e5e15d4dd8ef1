package promql

import (
	"context"
	"math"
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
