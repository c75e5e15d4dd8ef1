package read_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
)

// TestFetchMatchesModel walks every series of Fetch's iterators, under
// both plans, with a scan buffer too small to hold the rows (the fallback
// to Gets), with random Next, SeekTime and NextBatch calls and with
// iterators reused from one series to the next.
func TestFetchMatchesModel(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	all := s.selection(t, "m")
	rng := rand.New(rand.NewPCG(3, 4))
	for _, maxBytes := range []int64{0, 100} {
		r := s.reader(t, read.Options{MaxFetchBytes: maxBytes})
		for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
			for _, rg := range modelRanges {
				for _, sel := range [][]int{nil, {0, 2, 5}} {
					name := fmt.Sprintf("max %d %s/%d-%d/%v", maxBytes, plan, rg[0]-t0, rg[1]-t0, sel)
					selection := read.Selection{Series: all, Start: rg[0], End: rg[1], Plan: plan}
					if sel != nil {
						selection.Series = nil
						for _, i := range sel {
							selection.Series = append(selection.Series, all[i])
						}
					}
					f, err := r.Fetch(context.Background(), selection)
					if err != nil {
						t.Fatal(err)
					}
					var reuse *read.SeriesIterator
					for i, x := range selection.Series {
						want := m.want(hostOf(t, s, x), rg[0], rg[1])
						reuse = f.Iterator(context.Background(), i, reuse)
						walkModel(t, name, rng, reuse, want, rg)
					}
				}
			}
		}
		st := r.Stats()
		if maxBytes == 0 && (st.PlansScan == 0 || st.Scans == 0) {
			t.Fatalf("stats %+v: the scan plan never ran", st)
		}
		// Each range is read under both plans and two selections: rows
		// come from the row cache, found by the scan or by the Gets.
		if st.CacheHits == 0 {
			t.Fatalf("stats %+v: no row cache hits", st)
		}
		// Half the fetches force Gets; with a 100-byte buffer, scans that
		// meet stored rows fall back to them too.
		if maxBytes == 100 && st.PlansSeries <= 10 {
			t.Fatalf("stats %+v: a 100-byte buffer held every scan", st)
		}
	}
}

// walkModel drives it with random calls and checks each position in want.
func walkModel(t *testing.T, name string, rng *rand.Rand, it *read.SeriesIterator, want []series.Point, rg [2]int64) {
	t.Helper()
	p := -1 // it's position in want
	for step := 0; ; step++ {
		var ok bool
		var batch []series.Point
		target := rg[0] + rng.Int64N(rg[1]-rg[0]+1)
		switch rng.IntN(4) {
		case 0:
			ok = it.SeekTime(target)
			p = max(p, 0)
			for p < len(want) && want[p].T < target {
				p++
			}
		case 1:
			if rng.IntN(2) == 0 {
				target = math.MinInt64
			}
			batch, ok = it.NextBatch(target)
			p++
			for p < len(want) && want[p].T < target {
				p++
			}
		default:
			ok = it.Next()
			p++
		}
		if ok != (p < len(want)) {
			t.Fatalf("%s step %d: iterator says %v, model at %d of %d", name, step, ok, p, len(want))
		}
		if !ok {
			if err := it.Err(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return
		}
		if batch != nil {
			if len(batch) == 0 || !slices.Equal(batch, want[p:p+len(batch)]) {
				t.Fatalf("%s step %d: batch of %d points differs from the model at %d", name, step, len(batch), p)
			}
			p += len(batch) - 1
			if n := p + 1; n < len(want) && want[n].T/hourMs == batch[0].T/hourMs {
				t.Fatalf("%s step %d: batch stops inside its hour", name, step)
			}
		}
		if got := it.At(); got != want[p] {
			t.Fatalf("%s step %d: at %+v, want %+v", name, step, got, want[p])
		}
	}
}

// TestFetchBudget: points decoded from fetched rows count against the
// budget, as Gets' do; so do head rows, which the scan plan reads in
// Fetch, before the store.
func TestFetchBudget(t *testing.T) {
	s := openStack(t)
	loadSplit(t, s)
	r := s.reader(t, read.Options{})
	sel := s.selection(t, "m")
	for _, c := range []struct {
		plan read.Plan
		max  int64
	}{{read.PlanSeries, 100}, {read.PlanScan, 100}, {read.PlanScan, 4000}} {
		plan := c.plan
		f, err := r.Fetch(context.Background(), budgetSel(sel, plan, read.Limits{MaxPoints: c.max}))
		if plan == read.PlanScan && c.max == 100 {
			wantLimit(t, "scan, head rows", err, "data points")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var it *read.SeriesIterator
		var err2 error
		for i := 0; i < f.Len() && err2 == nil; i++ {
			it = f.Iterator(context.Background(), i, it)
			for it.Next() {
			}
			err2 = it.Err()
		}
		wantLimit(t, plan.String(), err2, "data points")
	}
}

// TestFetchThenFlush flushes the head between Fetch's scan and the
// iterators: the rows that moved to the store after the scan read it were
// read from the head before it, so no point is lost (iterators that read
// the head only when they start would find it empty by then).
func TestFetchThenFlush(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{})
	sel := s.selection(t, "m")
	rg := [2]int64{t0, t0 + 6*hourMs}
	f, err := r.Fetch(context.Background(), read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: read.PlanScan})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	s.flushAll(t)
	for i := range f.Len() {
		it := f.Iterator(context.Background(), i, nil)
		var got []series.Point
		for it.Next() {
			got = append(got, it.At())
		}
		want := m.want(hostOf(t, s, sel[i]), rg[0], rg[1])
		if it.Err() != nil || !slices.Equal(got, want) {
			t.Fatalf("series %d: %d points (err %v), want %d", i, len(got), it.Err(), len(want))
		}
		it.Close()
	}
}

// TestFetchHeadOverMaxFetchBytes: head rows read up front count against
// MaxFetchBytes like the scan's cells; past it Fetch falls back to the
// per-series plan and refunds the head points it charged: the budget is
// then spent as by the per-series plan itself.
func TestFetchHeadOverMaxFetchBytes(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{MaxFetchBytes: 1000, RowCacheBytes: -1})
	sel := s.selection(t, "m")
	rg := [2]int64{t0, t0 + 6*hourMs}
	var spent [2]int64
	for k, plan := range []read.Plan{read.PlanScan, read.PlanSeries} {
		b := read.NewBudget(read.Limits{})
		f, err := r.Fetch(context.Background(), read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: plan, Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		if st := r.Stats(); st.PlansScan != 0 || st.PlansSeries != int64(k+1) {
			t.Fatalf("%s: stats %+v, want the per-series plan", plan, st)
		}
		var it *read.SeriesIterator
		for i := range f.Len() {
			it = f.Iterator(context.Background(), i, it)
			var got []series.Point
			for it.Next() {
				got = append(got, it.At())
			}
			if want := m.want(hostOf(t, s, sel[i]), rg[0], rg[1]); it.Err() != nil || !slices.Equal(got, want) {
				t.Fatalf("%s: series %d: %d points (err %v), want %d", plan, i, len(got), it.Err(), len(want))
			}
		}
		it.Close()
		f.Release()
		_, spent[k] = b.Spent()
	}
	if spent[0] != spent[1] || spent[0] == 0 {
		t.Fatalf("points charged: %d after the fallback, %d by the per-series plan", spent[0], spent[1])
	}
}

// TestReadWithoutHead: a Reader without a head (a read-only tool over a
// store) reads the stored rows every way, scans included.
func TestReadWithoutHead(t *testing.T) {
	s := openStack(t)
	m := model{}
	for _, h := range []string{"a", "b"} {
		for ts := t0; ts < t0+2*hourMs; ts += 60_000 {
			m.put(s, t, h, series.IntPoint(ts, ts/60_000%7))
		}
	}
	s.flushAll(t)
	r, err := read.New(&read.Options{Data: s.data, Layout: s.layout, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	readEveryWay(t, s, r, s.selection(t, "m"), m, [2]int64{t0, t0 + 2*hourMs})
	f, err := r.Fetch(context.Background(), read.Selection{Series: s.selection(t, "m"), Start: t0, End: t0 + 2*hourMs, Plan: read.PlanScan})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	it := f.Iterator(context.Background(), 0, nil)
	n := 0
	for it.Next() {
		n++
	}
	if it.Close(); n != 120 {
		t.Fatalf("fetched iterator: %d points, want 120", n)
	}
}

// TestHeadRowsOnWorkers: a selection large enough that workers read the
// head rows in parts, merged back in series order (decoded copies in
// one slab, with and without the row cache), reads right every way.
func TestHeadRowsOnWorkers(t *testing.T) {
	s := openStack(t)
	m := model{}
	rng := rand.New(rand.NewPCG(9, 9))
	write := func(fromHour, toHour int64) {
		for i := range 40 {
			for ts := t0 + fromHour*hourMs; ts < t0+toHour*hourMs; ts += 30_000 + rng.Int64N(60_000) {
				m.put(s, t, fmt.Sprintf("h%02d", i), randPoint(rng, ts))
			}
		}
	}
	write(0, 2)
	s.flushAll(t)
	write(1, 4) // hour 1 in both: late points merge with stored ones
	all := s.selection(t, "m")
	for _, cache := range []int64{0, -1} {
		r := s.reader(t, read.Options{Parallelism: 4, RowCacheBytes: cache})
		for range 2 {
			readEveryWay(t, s, r, all, m, [2]int64{t0, t0 + 4*hourMs})
			readEveryWay(t, s, r, all, m, [2]int64{t0 + hourMs + 1234, t0 + 3*hourMs})
		}
	}
}

// TestFetchNotesMatchRead stores annotation cells in rows of several
// series (two of them outside the range) and checks that Fetch's iterators, under both plans, with
// the row cache cold and warm and with a buffer too small for the scan,
// find each series' notes exactly as Read does.
func TestFetchNotesMatchRead(t *testing.T) {
	s := openStack(t)
	loadSplit(t, s)
	all := s.selection(t, "m")
	ctx := context.Background()
	notes := []struct {
		series int
		base   int64 // row base ms
		off    int   // seconds into the row
	}{{0, t0, 50}, {0, t0 + hourMs, 5}, {0, t0 + hourMs, 3000}, {3, t0 + 2*hourMs, 7}, {5, t0 + 5*hourMs, 1}, {7, t0 + 9*hourMs, 10}}
	for i, n := range notes {
		row, err := s.layout.AppendRowKeyFromTSUID(nil, []byte(all[n.series].TSUID), n.base)
		if err != nil {
			t.Fatal(err)
		}
		q := []byte{0x01, byte(n.off >> 8), byte(n.off)}
		c := storage.Cell{Family: "t", Qualifier: q, Value: fmt.Appendf(nil, `{"description":"n%d"}`, i)}
		if err := s.data.Put(ctx, row, []storage.Cell{c}); err != nil {
			t.Fatal(err)
		}
	}
	rg := [2]int64{t0 + 100_000, t0 + 6*hourMs}
	for _, maxBytes := range []int64{0, 100} {
		r := s.reader(t, read.Options{MaxFetchBytes: maxBytes})
		for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
			sel := read.Selection{Series: all, Start: rg[0], End: rg[1], Plan: plan, Notes: true}
			want := map[string][]read.Note{}
			if err := r.Read(ctx, sel, func(x index.Series, _ []series.Point, n []read.Note) error {
				want[x.TSUID] = n
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(want[all[0].TSUID]) != 2 || len(want[all[5].TSUID]) != 1 || len(want[all[7].TSUID]) != 0 {
				t.Fatalf("Read's notes %v: the test's cells are not where it meant", want)
			}
			for pass := range 2 { // the second pass finds the rows in the cache
				f, err := r.Fetch(ctx, sel)
				if err != nil {
					t.Fatal(err)
				}
				var it *read.SeriesIterator
				for i, x := range all {
					it = f.Iterator(ctx, i, it)
					for it.Next() {
					}
					if err := it.Err(); err != nil {
						t.Fatal(err)
					}
					if got := it.Notes(); !notesEqual(got, want[x.TSUID]) {
						t.Errorf("max %d %s pass %d series %d: notes %v, want %v", maxBytes, plan, pass, i, got, want[x.TSUID])
					}
				}
				it.Close()
				f.Release()
			}
		}
	}
}

func notesEqual(a, b []read.Note) bool {
	return slices.EqualFunc(a, b, func(x, y read.Note) bool { return x.T == y.T && string(x.Value) == string(y.Value) })
}

// TestFetchSelectionBound: Selection.MaxFetchBytes, below the reader's
// bound, sends a scan that would keep more to the per-series plan; the
// points are the same.
func TestFetchSelectionBound(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	all := s.selection(t, "m")
	r := s.reader(t, read.Options{RowCacheBytes: -1})
	rg := modelRanges[0]
	for _, bound := range []int64{0, 100} {
		before := r.Stats()
		f, err := r.Fetch(context.Background(), read.Selection{Series: all, Start: rg[0], End: rg[1], Plan: read.PlanScan, MaxFetchBytes: bound})
		if err != nil {
			t.Fatal(err)
		}
		var it *read.SeriesIterator
		for i, x := range all {
			it = f.Iterator(context.Background(), i, it)
			var got []series.Point
			for it.Next() {
				got = append(got, it.At())
			}
			if want := m.want(hostOf(t, s, x), rg[0], rg[1]); !slices.Equal(got, want) {
				t.Fatalf("bound %d series %d: %d points, want %d", bound, i, len(got), len(want))
			}
		}
		it.Close()
		f.Release()
		after := r.Stats()
		if scanned := after.PlansScan > before.PlansScan; scanned != (bound == 0) {
			t.Errorf("bound %d: scan plan kept %v, want %v (stats %+v)", bound, scanned, bound == 0, after)
		}
	}
}
