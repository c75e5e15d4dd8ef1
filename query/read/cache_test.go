package read_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
)

// readEveryWay reads all of sel over rg with Read and Visit under both
// plans and with an Iterator and Last per series, and checks each against
// m: every surface gives the core's merged rows.
func readEveryWay(t *testing.T, s *stack, r *read.Reader, sel []index.Series, m model, rg [2]int64) {
	t.Helper()
	ctx := context.Background()
	for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
		name := fmt.Sprintf("read/%s/%d-%d", plan, rg[0]-t0, rg[1]-t0)
		got := readAll(t, s, r, read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: plan})
		checkGot(t, name, s, sel, m, got, rg)
		v := &collectVisitor{pts: make([][]series.Point, len(sel))}
		if err := r.Visit(ctx, read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: plan}, v); err != nil || v.err != nil {
			t.Fatalf("visit/%s: %v %v", plan, err, v.err)
		}
		for i, x := range sel {
			if want := m.want(hostOf(t, s, x), rg[0], rg[1]); !slices.Equal(v.pts[i], want) {
				t.Fatalf("visit/%s: series %d: %d points, want %d", plan, i, len(v.pts[i]), len(want))
			}
		}
	}
	for _, x := range sel {
		it := r.Iterator(ctx, x, rg[0], rg[1], nil)
		var got []series.Point
		for it.Next() {
			got = append(got, it.At())
		}
		want := m.want(hostOf(t, s, x), rg[0], rg[1])
		if it.Err() != nil || !slices.Equal(got, want) {
			t.Fatalf("iterator: %d points (err %v), want %d", len(got), it.Err(), len(want))
		}
		it.Close()
		p, ok, err := r.Last(ctx, x, rg[0], rg[1])
		if err != nil || ok != (len(want) > 0) || (ok && p != want[len(want)-1]) {
			t.Fatalf("last: %v %v (err %v), want the newest of %d points", p, ok, err, len(want))
		}
	}
}

// TestRowCacheRepeatReads reads the same rows every way several times:
// from the second read on rows come from the cache, and every answer
// still matches the model (a consumer writing into a shared cached slice,
// or a wrong entry, would show up here).
func TestRowCacheRepeatReads(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{})
	all := s.selection(t, "m")
	for range 3 {
		for _, rg := range modelRanges {
			readEveryWay(t, s, r, all, m, rg)
		}
	}
	st := r.Stats()
	if st.CacheHits == 0 || st.CacheRows == 0 || st.CacheBytes == 0 {
		t.Fatalf("stats %+v: repeated reads should hit the row cache", st)
	}
	if st.CacheHits < st.CacheMisses {
		t.Fatalf("stats %+v: fewer hits than misses over three rounds", st)
	}
	r.DropCache()
	if st := r.Stats(); st.CacheRows != 0 || st.CacheBytes != 0 {
		t.Fatalf("after DropCache: %+v", st)
	}
	readEveryWay(t, s, r, all, m, modelRanges[0])
}

// TestRowCacheSeesNewCells caches stored rows, then flushes the head's
// late points into those same rows as new cells: the next read must see
// them, though the cache holds the rows' old points under the same keys.
func TestRowCacheSeesNewCells(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{})
	all := s.selection(t, "m")
	rg := [2]int64{t0, t0 + 6*hourMs}
	for range 3 {
		readEveryWay(t, s, r, all, m, rg)
	}
	rows := r.Stats().CacheRows
	s.flushAll(t) // hours 1-2 of six series gain a cell; the head empties
	readEveryWay(t, s, r, all, m, rg)
	readEveryWay(t, s, r, all, m, rg)
	if st := r.Stats(); st.CacheRows <= rows {
		t.Fatalf("stats %+v: the changed rows should be cached anew (had %d rows)", st, rows)
	}
}

// TestRowCacheBounded reads far more than a small cache holds: it stays
// within its bytes and still answers right.
func TestRowCacheBounded(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	const limit = 48 << 10
	r := s.reader(t, read.Options{RowCacheBytes: limit})
	all := s.selection(t, "m")
	for range 3 {
		readEveryWay(t, s, r, all, m, [2]int64{t0, t0 + 6*hourMs})
	}
	st := r.Stats()
	if st.CacheBytes > limit || st.CacheRows == 0 {
		t.Fatalf("stats %+v: want 0 < bytes <= %d", st, limit)
	}
	off := s.reader(t, read.Options{RowCacheBytes: -1})
	readEveryWay(t, s, off, all, m, [2]int64{t0, t0 + 6*hourMs})
	readEveryWay(t, s, off, all, m, [2]int64{t0, t0 + 6*hourMs})
	if st := off.Stats(); st.CacheHits+st.CacheMisses+st.CacheRows != 0 {
		t.Fatalf("disabled cache: %+v", st)
	}
}

// TestRowCacheSeesRewrittenCell rewrites a cached one-cell row in place:
// the same qualifier and cell count, one point's value changed. The next
// read must return the new value (the fingerprint covers cell contents,
// not only the key and the number of cells).
func TestRowCacheSeesRewrittenCell(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{})
	all := s.selection(t, "m")
	rg := [2]int64{t0, t0 + hourMs - 1} // hour 0: stored, nothing in the head
	for range 3 {
		readEveryWay(t, s, r, all, m, rg)
	}
	rewriteOnePoint(t, s, all[0], m)
	readEveryWay(t, s, r, all, m, rg)
}

// rewriteOnePoint rewrites x's one-cell row of hour 0 in place, without
// a mark: the same qualifier and cell count, one point's value changed
// (in m too).
func rewriteOnePoint(t *testing.T, s *stack, x index.Series, m model) {
	t.Helper()
	ctx := context.Background()
	host := hostOf(t, s, x)
	key, err := s.layout.AppendRowKeyFromTSUID(nil, []byte(x.TSUID), t0)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.data.Get(ctx, key, nil)
	if err != nil || len(cells) != 1 {
		t.Fatalf("row of %s: %d cells, %v; want one dense cell", host, len(cells), err)
	}
	pts := m.want(host, t0, t0+hourMs-1)
	pts[len(pts)/2] = series.IntPoint(pts[len(pts)/2].T, 123456789)
	val, err := (&rowkey.DenseEncoder{}).Append(nil, t0/1000, pts)
	if err != nil {
		t.Fatal(err)
	}
	c := cells[0]
	c.Value, c.Timestamp = val, c.Timestamp+1000
	if err := s.data.Put(ctx, key, []storage.Cell{c}); err != nil {
		t.Fatal(err)
	}
	m[host][pts[len(pts)/2].T] = pts[len(pts)/2]
}

// TestRowCacheHeadRows reads rows that are only in the head, as right
// after a bulk load: from the second read on they come from the row cache
// (with their exact sums, for pushed-down sums), and a point added or
// replaced afterwards is seen at once, in order or not.
func TestRowCacheHeadRows(t *testing.T) {
	s := openStack(t)
	m := model{}
	for i, h := range []string{"a", "b", "c"} {
		for ts := t0; ts < t0+3*hourMs; ts += 10_000 {
			m.put(s, t, h, series.IntPoint(ts, ts/10_000%97+int64(i)))
		}
	}
	r := s.reader(t, read.Options{})
	all := s.selection(t, "m")
	rg := [2]int64{t0, t0 + 3*hourMs - 1}
	// Rows of hours that are over enter on their first read.
	for round := range 2 {
		for _, x := range all {
			it := r.Iterator(context.Background(), x, rg[0], rg[1], nil)
			for it.Next() {
			}
			it.Close()
		}
		if st := r.Stats(); st.CacheRows != 9 || st.CacheHits != int64(9*round) {
			t.Fatalf("round %d: stats %+v, want the 9 head rows cached at once and hit after", round, st)
		}
	}
	// The row of the hour not yet over waits for its second sighting.
	filling := s.reader(t, read.Options{Now: func() time.Time { return time.UnixMilli(t0 + 2*hourMs + 5) }})
	for _, x := range all {
		it := filling.Iterator(context.Background(), x, rg[0], rg[1], nil)
		for it.Next() {
		}
		it.Close()
	}
	if st := filling.Stats(); st.CacheRows != 6 {
		t.Fatalf("stats %+v: want the 6 rows of hours over cached at once", st)
	}
	for range 3 {
		readEveryWay(t, s, r, all, m, rg)
	}
	st := r.Stats()
	if st.CacheHits == 0 || st.CacheRows < 9 {
		t.Fatalf("stats %+v: head rows read three times should be cached and hit", st)
	}
	if st.Gets+st.Scans == 0 {
		t.Fatalf("stats %+v: the store is read too, for rows it may hold", st)
	}

	it := r.Iterator(context.Background(), all[0], rg[0], rg[1], nil)
	pts, ok := it.NextBatch(t0 + hourMs)
	if !ok || len(pts) != 360 {
		t.Fatalf("second hour: %d points, ok=%v", len(pts), ok)
	}
	for _, k := range []int{1, 100, 359, 360} {
		sum, _, ok := it.BatchSum(pts[360-k:], k/2+1)
		var want int64
		for _, p := range pts[360-k:][:k/2+1] {
			want += p.Int()
		}
		if !ok || sum != want {
			t.Fatalf("BatchSum of %d of a cached head row's last %d: %d ok=%v, want %d", k/2+1, k, sum, ok, want)
		}
	}
	it.Close()

	// Visit gives cached head rows with their sums too.
	sv := &sumVisitor{collectVisitor: collectVisitor{pts: make([][]series.Point, len(all))}}
	if err := r.Visit(context.Background(), read.Selection{Series: all, Start: rg[0], End: rg[1]}, sv); err != nil || sv.err != nil {
		t.Fatalf("visit: %v %v", err, sv.err)
	}
	if sv.sums != 9 {
		t.Fatalf("visit: %d batches came with their sums, want the 9 cached head rows", sv.sums)
	}

	host := hostOf(t, s, all[0])
	m.put(s, t, host, series.IntPoint(t0+3*hourMs-1, 5000))         // in order
	m.put(s, t, host, series.IntPoint(t0+hourMs+5, -7))             // out of order
	m.put(s, t, host, series.Float64Point(t0+2*hourMs+10_000, 2.5)) // replaced
	readEveryWay(t, s, r, all, m, rg)
	readEveryWay(t, s, r, all, m, rg)
}

// sumVisitor is a collectVisitor that also takes sums, checking each.
type sumVisitor struct {
	collectVisitor
	sums int
}

func (v *sumVisitor) PointsSum(i int, pts []series.Point, sum int64, maxAbs uint64) error {
	var want int64
	for _, p := range pts {
		want += p.Int()
	}
	v.mu.Lock()
	if sum != want || maxAbs == 0 {
		v.err = fmt.Errorf("series %d: sum %d (max %d), points add up to %d", i, sum, maxAbs, want)
	}
	v.sums++
	v.mu.Unlock()
	return v.Points(i, pts)
}

// TestIteratorBatchOutlivesRowReader: a batch stays valid after its
// iterator gave its row reader back and another iterator decoded into
// it, also when the head row of the batch's hour lies wholly outside the
// range (the batch is then the stored row alone, decoded where no other
// iterator writes).
func TestIteratorBatchOutlivesRowReader(t *testing.T) {
	s := openStack(t)
	m := model{}
	for ts := t0; ts < t0+hourMs; ts += 10_000 {
		m.put(s, t, "a", series.IntPoint(ts, (ts-t0)/10_000))
		m.put(s, t, "b", series.IntPoint(ts, -(ts-t0)/10_000))
	}
	s.flushAll(t)
	m.put(s, t, "a", series.IntPoint(t0+5, 1))        // head row of the hour, before the range
	m.put(s, t, "b", series.IntPoint(t0+hourMs-5, 2)) // and one inside it
	r := s.reader(t, read.Options{RowCacheBytes: -1})
	all := s.selection(t, "m")
	rg := [2]int64{t0 + hourMs/2, t0 + hourMs - 1}
	ctx := context.Background()
	var a, b index.Series
	for _, x := range all {
		if hostOf(t, s, x) == "a" {
			a = x
		} else {
			b = x
		}
	}
	ia := r.Iterator(ctx, a, rg[0], rg[1], nil)
	batch, ok := ia.NextBatch(rg[0])
	want := m.want("a", rg[0], rg[1])
	if !ok || !slices.Equal(batch, want) {
		t.Fatalf("a: %d points, want %d", len(batch), len(want))
	}
	for range 3 { // the row reader a gave back is likely b's
		ib := r.Iterator(ctx, b, rg[0], rg[1], nil)
		for ib.Next() {
		}
		ib.Close()
	}
	if !slices.Equal(batch, want) {
		t.Fatal("a's batch changed under it after another iterator ran")
	}
	ia.Close()
}
