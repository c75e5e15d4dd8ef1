package ingest

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// store is a real pebble engine on fs with a data table of family "t"
// (one version, as cmd/tsd creates it) and a meta table.
type store struct {
	db   *tsdpebble.DB
	tbl  storage.Table
	meta storage.Table
}

func openStore(t testing.TB, fs vfs.FS) *store { return openStoreAt(t, fs, "db") }

func openStoreAt(t testing.TB, fs vfs.FS, dir string) *store {
	t.Helper()
	db, err := tsdpebble.Open(dir, &tsdpebble.Options{FS: fs, Logger: slog.New(slog.DiscardHandler), GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, spec := range []storage.TableSpec{
		{Name: "tsdb", Families: []storage.FamilySpec{{Name: "t", MaxVersions: 1}}},
		uid.MetaTableSpec("tsdb-meta"),
	} {
		if err := db.EnsureTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := db.Table(ctx, "tsdb")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := db.Table(ctx, "tsdb-meta")
	if err != nil {
		t.Fatal(err)
	}
	return &store{db: db, tbl: tbl, meta: meta}
}

// points reads the row of key at base back through rowkey's row decoder.
func (s *store) points(t testing.TB, key []byte, base int64) ([]series.Point, int) {
	t.Helper()
	l := rowkey.DefaultLayout()
	row, err := l.AppendRowKeyFromTSUID(nil, key, base)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.tbl.Get(context.Background(), row, nil)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var rc []rowkey.Cell
	for _, c := range cells {
		rc = append(rc, rowkey.Cell{Qualifier: c.Qualifier, Value: c.Value, Timestamp: c.Timestamp})
	}
	var d rowkey.RowDecoder
	pts, err := d.Decode(nil, base/1000, rc)
	if err != nil {
		t.Fatalf("decode row of %x at %d: %v", key, base, err)
	}
	return pts, len(cells)
}

func flushOpts(s *store) *FlushOptions {
	return &FlushOptions{Table: s.tbl, WriterID: 7, Grace: time.Minute}
}

// checkSplit checks that every point of m is in the store (hours before
// flushedBefore) or in the head (later hours), and nowhere else.
func (m model) checkSplit(t testing.TB, h *Head, s *store, flushedBefore int64) {
	t.Helper()
	for key := range m {
		for base := rowBase(t0); base < t0+4*RowSpan; base += RowSpan {
			want := m.points(key, base, base+RowSpan)
			fromStore, _ := s.points(t, []byte(key), base)
			fromHead := h.AppendPoints(nil, []byte(key), base, base+RowSpan)
			got, other := fromHead, fromStore
			if base < flushedBefore {
				got, other = fromStore, fromHead
			}
			if !slices.Equal(got, want) || len(other) != 0 {
				t.Fatalf("series %x hour %d: %d points where expected, %d elsewhere, want %d", key, (base-t0)/RowSpan, len(got), len(other), len(want))
			}
		}
	}
}

func TestFlushRows(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.db.Close()
	opts := testOpts(nil)
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + 2*RowSpan) }
	h := mustOpenHead(t, fs, opts)
	defer h.Close()
	m := model{}
	appendRandom(t, h, rand.New(rand.NewPCG(11, 11)), testKeys(20), 5000, m)
	f, err := h.NewFlusher(flushOpts(s))
	if err != nil {
		t.Fatal(err)
	}
	memBefore := h.MemoryBytes()
	// Hours 0 and 1 are over and quiet; hour 2 is not over.
	now := time.UnixMilli(t0 + 2*RowSpan + 2*time.Minute.Milliseconds())
	st, err := f.Flush(context.Background(), now, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 40 || st.Columns != 40 {
		t.Fatalf("flushed %+v, want the 40 rows of hours 0 and 1", st)
	}
	m.checkSplit(t, h, s, t0+2*RowSpan)
	if h.MemoryBytes() >= memBefore {
		t.Fatalf("memory %d after flushing, %d before", h.MemoryBytes(), memBefore)
	}
	// Rows of hours 2 and 3 hold points from segment 1 on: nothing to delete.
	if oldest, _ := h.OldestSegment(); h.log.FirstSegment() != oldest || st.TruncatedBefore != oldest {
		t.Fatalf("log starts at segment %d after the flush (stats %d), oldest needed %d", h.log.FirstSegment(), st.TruncatedBefore, oldest)
	}

	// A late point for a flushed hour becomes a second column that wins.
	key := testKeys(1)[0]
	late := series.Float64Point(m.points(string(key), t0, t0+RowSpan)[0].T, 42)
	a := h.Appender()
	a.AppendKey(key, late)
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	m.add(key, late)
	if _, err := f.Flush(context.Background(), now.Add(time.Hour), true); err != nil {
		t.Fatal(err)
	}
	m.checkSplit(t, h, s, t0+4*RowSpan)
	if cur := h.log.Segment(); h.log.FirstSegment() != cur || cur < 2 {
		t.Fatalf("after flushing everything the log keeps segments %d..%d", h.log.FirstSegment(), cur)
	}
	if _, cols := s.points(t, key, t0); cols != 2 {
		t.Fatalf("row with a late point has %d columns, want 2", cols)
	}
	if h.MemoryBytes() != h.NumSeries()*(seriesOverhead+15) { // 15-byte keys: all row memory released
		t.Fatalf("empty head holds %d bytes for %d series", h.MemoryBytes(), h.NumSeries())
	}
	// Everything is flushed: the log holds no point any more.
	h.Close()
	h = mustOpenHead(t, fs, testOpts(nil))
	if st := h.ReplayStats(); st.Samples != 0 {
		t.Fatalf("after a full flush, replay still found %d samples", st.Samples)
	}
}

func TestFlushFailureKeepsRows(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	h := mustOpenHead(t, fs, testOpts(nil))
	defer h.Close()
	m := model{}
	appendRandom(t, h, rand.New(rand.NewPCG(12, 12)), testKeys(5), 5000, m)
	f, err := h.NewFlusher(flushOpts(s))
	if err != nil {
		t.Fatal(err)
	}
	s.db.Close() // every write now fails
	mem := h.MemoryBytes()
	if _, err := f.Flush(context.Background(), time.UnixMilli(t0+10*RowSpan), true); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("flush into a closed store: %v", err)
	}
	m.check(t, h)
	if h.MemoryBytes() != mem || h.log.FirstSegment() != 1 {
		t.Fatalf("after a failed flush: memory %d (was %d), log starts at %d", h.MemoryBytes(), mem, h.log.FirstSegment())
	}
}

// TestFlushCrash: one crash clone of the file system holding both the log
// and the store keeps every point committed with sync, in one of them.
func TestFlushCrash(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for iter := range 4 {
		fs := vfs.NewCrashableMem()
		s := openStore(t, fs)
		opts := testOpts(nil)
		clock := int64(t0)
		opts.Clock = func() time.Time { return time.UnixMilli(clock) }
		h := mustOpenHead(t, fs, opts)
		f, err := h.NewFlusher(flushOpts(s))
		if err != nil {
			t.Fatal(err)
		}
		m := model{}
		a := h.Appender()
		keys := testKeys(8)
		for i := range 3000 {
			key := keys[rng.IntN(len(keys))]
			p := series.IntPoint(t0+int64(i)*3000, int64(i))
			clock = p.T
			a.AppendKey(key, p)
			m.add(key, p)
			if i%100 == 99 {
				if err := a.Commit(true); err != nil {
					t.Fatal(err)
				}
			}
			if i%1000 == 999 {
				if _, err := f.Flush(context.Background(), time.UnixMilli(p.T+RowSpan), false); err != nil {
					t.Fatal(err)
				}
			}
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rng})
		h.Close()
		s.db.Close()
		s2 := openStore(t, clone)
		h2 := mustOpenHead(t, clone, testOpts(nil))
		for key, ps := range m {
			var got []series.Point
			for base := rowBase(t0); base < t0+3*RowSpan; base += RowSpan {
				stored, _ := s2.points(t, []byte(key), base)
				got = append(got, stored...)
			}
			got = append(got, h2.AppendPoints(nil, []byte(key), 0, 1<<62)...)
			slices.SortFunc(got, func(a, b series.Point) int { return cmpInt64(a.T, b.T) })
			got = slices.Compact(got) // a point may be both flushed and replayed
			if len(got) != len(ps) {
				t.Fatalf("iter %d series %x: %d points survive, %d committed with sync", iter, key, len(got), len(ps))
			}
			for _, p := range got {
				if ps[p.T] != p {
					t.Fatalf("iter %d: point %+v was never written", iter, p)
				}
			}
		}
		h2.Close()
		s2.db.Close()
	}
}

func TestFlusherOptions(t *testing.T) {
	h := mustOpenHead(t, vfs.NewMem(), testOpts(nil))
	defer h.Close()
	s := openStore(t, vfs.NewMem())
	defer s.db.Close()
	for name, o := range map[string]*FlushOptions{
		"no table":  {WriterID: 1},
		"writer 0":  {Table: s.tbl},
		"widths":    {Table: s.tbl, WriterID: 1, Layout: &rowkey.Layout{Widths: series.Widths{Metric: 4, TagK: 3, TagV: 3}}},
		"neg grace": {Table: s.tbl, WriterID: 1, Grace: -time.Second},
	} {
		if _, err := h.NewFlusher(o); err == nil {
			t.Errorf("%s: NewFlusher accepted %+v", name, o)
		}
	}
}

func TestFlushSeqNeverRepeats(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll("d", 0o755)
	seen := map[uint32]bool{}
	for range 3 {
		s, err := openFlushSeq(fs, "d")
		if err != nil {
			t.Fatal(err)
		}
		for range seqBlock + 10 {
			n, err := s.take()
			if err != nil {
				t.Fatal(err)
			}
			if seen[n] {
				t.Fatalf("flush number %d handed out twice", n)
			}
			seen[n] = true
		}
	}
}

func TestFlushLoop(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.db.Close()
	opts := testOpts(nil)
	start := time.Now()
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + 5*RowSpan).Add(time.Since(start)) }
	h := mustOpenHead(t, fs, opts)
	defer h.Close()
	a := h.Appender()
	key := seriesKey(1, 1, 1)
	a.AppendKey(key, series.IntPoint(t0, 5)) // hours ago, arrived "now"
	a.Commit(false)
	f, err := h.NewFlusher(&FlushOptions{Table: s.tbl, WriterID: 3, Grace: time.Millisecond, Spread: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The row's hour is long over: it is due a millisecond after arrival.
	f.Start(time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for len(h.AppendPoints(nil, key, 0, 1<<62)) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	f.Stop()
	if pts, _ := s.points(t, key, t0); len(pts) != 1 || pts[0] != series.IntPoint(t0, 5) {
		t.Fatalf("background flush wrote %v", pts)
	}
}
