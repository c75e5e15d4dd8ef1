package head

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/series"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// countingRegistrar is a real, minimal series index: a set of keys.
type countingRegistrar struct {
	mu    sync.Mutex
	keys  map[string]int
	fail  error
	calls int
}

func (r *countingRegistrar) RegisterSeries(key []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail != nil {
		return r.fail
	}
	if r.keys == nil {
		r.keys = map[string]int{}
	}
	r.keys[string(key)]++
	return nil
}

func testOpts(reg SeriesRegistrar) *HeadOptions {
	return &HeadOptions{Registrar: reg, Logger: ingesttest.Quiet, WAL: ingesttest.WAL}
}

func mustOpenHead(t testing.TB, fs vfs.FS, opts *HeadOptions) *Head {
	t.Helper()
	return ingesttest.OpenHead(t, OpenHead, fs, opts)
}

const t0 = ingesttest.T0

// appendRandom commits n random points through a new appender of h
// (ingesttest.AppendRandom).
func appendRandom(t testing.TB, h *Head, rng *rand.Rand, keys [][]byte, n int, m ingesttest.Model) {
	t.Helper()
	ingesttest.AppendRandom(t, h.Appender(), rng, keys, n, m)
}

// openStore opens a pebble store on fs (ingesttest.NewStore).
func openStore(t testing.TB, fs vfs.FS) *ingesttest.Store { return openStoreAt(t, fs, "db") }

func openStoreAt(t testing.TB, fs vfs.FS, dir string) *ingesttest.Store {
	db, err := tsdpebble.Open(dir, &tsdpebble.Options{FS: fs, Logger: slog.New(slog.DiscardHandler), GCInterval: -1})
	return ingesttest.NewStore(t, db, err)
}

func TestHeadAppendRead(t *testing.T) {
	reg := &countingRegistrar{}
	h := mustOpenHead(t, vfs.NewMem(), testOpts(reg))
	defer h.Close()
	m := ingesttest.Model{}
	keys := ingesttest.Keys(20)
	appendRandom(t, h, rand.New(rand.NewPCG(1, 1)), keys, 20_000, m)
	m.Check(t, h)
	if len(reg.keys) != len(keys) || reg.calls != len(keys) {
		t.Fatalf("registrar saw %d keys in %d calls, want %d", len(reg.keys), reg.calls, len(keys))
	}
	if mem := h.MemoryBytes(); mem < 20_000 || mem > 1<<20 {
		t.Fatalf("memory accounting says %d bytes for 20,000 points", mem)
	}
}

func TestHeadOutOfOrderAndDuplicates(t *testing.T) {
	h := mustOpenHead(t, vfs.NewMem(), testOpts(nil))
	defer h.Close()
	key := ingesttest.SeriesKey(1, 1, 1)
	a := h.Appender()
	m := ingesttest.Model{}
	// Reverse order, then overwrite every third point, across a merge of the
	// out-of-order buffer.
	for i := 200; i >= 0; i-- {
		p := series.IntPoint(t0+int64(i)*10, int64(i))
		a.AppendKey(key, p)
		m.Add(key, p)
	}
	for i := 0; i <= 200; i += 3 {
		p := series.Float64Point(t0+int64(i)*10, -float64(i))
		a.AppendKey(key, p)
		m.Add(key, p)
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	m.Check(t, h)
	it := h.Iterator(key, t0+15, t0+35)
	var got []int64
	for it.Next() {
		got = append(got, it.At().T-t0)
	}
	if !slices.Equal(got, []int64{20, 30}) || it.Err() != nil {
		t.Fatalf("iterator over [15, 35): %v, %v", got, it.Err())
	}
}

func TestHeadReopen(t *testing.T) {
	fs := vfs.NewMem()
	reg := &countingRegistrar{}
	h := mustOpenHead(t, fs, testOpts(reg))
	m := ingesttest.Model{}
	keys := ingesttest.Keys(50)
	appendRandom(t, h, rand.New(rand.NewPCG(2, 2)), keys, 30_000, m)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h = mustOpenHead(t, fs, testOpts(reg))
	defer h.Close()
	m.Check(t, h)
	s := h.ReplayStats()
	if s.Series != 50 || s.Samples != 30_000 || s.BadRecords != 0 || s.OrphanSamples != 0 || len(s.WAL.Damaged) != 0 {
		t.Fatalf("replay stats %+v", s)
	}
	if s.WAL.Segments < 3 {
		t.Fatalf("only %d segments: the test must cross segment rotations", s.WAL.Segments)
	}
	// Replay registers again (the index may have lost it); still one key each.
	if len(reg.keys) != 50 || reg.calls != 100 {
		t.Fatalf("registrar: %d keys, %d calls", len(reg.keys), reg.calls)
	}
	// And appends continue on top of the replayed head.
	appendRandom(t, h, rand.New(rand.NewPCG(3, 3)), keys, 1000, m)
	m.Check(t, h)
}

// TestHeadCrash: on a simulated power loss every point committed with sync
// survives, and what the log holds replays without damage beyond its tail.
func TestHeadCrash(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for iter := range 10 {
		fs := vfs.NewCrashableMem()
		h := mustOpenHead(t, fs, testOpts(nil))
		a := h.Appender()
		synced, all := ingesttest.Model{}, ingesttest.Model{}
		keys := ingesttest.Keys(10)
		tm := int64(t0)
		for c := range 40 + rng.IntN(40) {
			batch := ingesttest.Model{}
			for range 1 + rng.IntN(100) {
				tm += 1 + int64(rng.IntN(1000))
				key := keys[rng.IntN(len(keys))]
				p := ingesttest.RandomPoint(rng, tm)
				a.AppendKey(key, p)
				batch.Add(key, p)
				all.Add(key, p)
			}
			sync := c%5 == 0
			if err := a.Commit(sync); err != nil {
				t.Fatal(err)
			}
			if sync {
				for k, ps := range batch {
					for _, p := range ps {
						synced.Add([]byte(k), p)
					}
				}
			}
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(3) * 50, RNG: rng})
		h.Close()
		h2 := mustOpenHead(t, clone, testOpts(nil))
		for key, ps := range synced {
			got := map[int64]series.Point{}
			for _, p := range h2.AppendPoints(nil, []byte(key), 0, 1<<62) {
				got[p.T] = p
				if p != all[key][p.T] {
					t.Fatalf("iter %d: point %+v was never written", iter, p)
				}
			}
			for _, p := range ps {
				if got[p.T] != p {
					t.Fatalf("iter %d: synced point %+v lost", iter, p)
				}
			}
		}
		// A crash leaves holes in what was not synced: records after one are
		// kept, and their points are orphaned only where the hole held their
		// series record.
		if s := h2.ReplayStats(); s.BadRecords > 0 || s.OrphanSamples > 0 && s.WAL.CorruptRecords+s.WAL.TornBytes == 0 {
			t.Fatalf("iter %d: replay %+v", iter, s)
		}
		h2.Close()
	}
}

func TestHeadBadInput(t *testing.T) {
	reg := &countingRegistrar{}
	h := mustOpenHead(t, vfs.NewMem(), testOpts(reg))
	defer h.Close()
	a := h.Appender()
	for name, key := range map[string][]byte{
		"short":         {0, 1},
		"half a tag":    append(ingesttest.SeriesKey(1, 1, 2), 0, 0, 3),
		"unsorted tags": ingesttest.SeriesKey(1, 5, 1, 2, 1),
		"duplicate tag": ingesttest.SeriesKey(1, 5, 1, 5, 2),
	} {
		if _, err := a.AppendKey(key, series.IntPoint(t0, 1)); !errors.Is(err, ErrBadSeriesKey) {
			t.Errorf("%s key: %v, want ErrBadSeriesKey", name, err)
		}
	}
	if _, err := a.AppendKey(ingesttest.SeriesKey(1), series.IntPoint(-1, 1)); !errors.Is(err, ErrOutOfBounds) {
		t.Errorf("negative timestamp: %v", err)
	}
	if _, err := a.AppendKey(ingesttest.SeriesKey(1), series.IntPoint(MaxTimestamp+1, 1)); !errors.Is(err, ErrOutOfBounds) {
		t.Errorf("timestamp beyond the row key's range: %v", err)
	}
	if err := a.Append(999, series.IntPoint(t0, 1)); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("unknown ref: %v", err)
	}
	// The new series of a commit are registered by Commit, which fails
	// with the registrar's error and shows nothing of the commit.
	reg.fail = errors.New("index down")
	if _, err := a.AppendKey(ingesttest.SeriesKey(9, 1, 1), series.IntPoint(t0, 1)); err != nil {
		t.Errorf("append to a new series: %v", err)
	}
	if err := a.Commit(false); !errors.Is(err, reg.fail) {
		t.Errorf("commit with a failing registrar: %v", err)
	}
	if got := h.AppendPoints(nil, ingesttest.SeriesKey(9, 1, 1), 0, MaxTimestamp); h.NumSeries() != 0 || a.Len() != 0 || len(got) != 0 {
		t.Errorf("after bad input: %d series, %d pending, points %v", h.NumSeries(), a.Len(), got)
	}
}

// faultFS is a MemFS whose file writes and syncs fail with ENOSPC while
// full is set, like a full disk.
type faultFS struct {
	vfs.FS
	mu   sync.Mutex
	full bool
}

func (fs *faultFS) isFull() bool   { fs.mu.Lock(); defer fs.mu.Unlock(); return fs.full }
func (fs *faultFS) setFull(v bool) { fs.mu.Lock(); fs.full = v; fs.mu.Unlock() }

func (fs *faultFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.isFull() {
		return nil, syscall.ENOSPC
	}
	f, err := fs.FS.Create(name, c)
	return &faultFile{File: f, fs: fs}, err
}

type faultFile struct {
	vfs.File
	fs *faultFS
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if f.fs.isFull() {
		n, _ := f.File.WriteAt(p[:len(p)/3], off)
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	if f.fs.isFull() {
		return syscall.ENOSPC
	}
	return f.File.Sync()
}

func TestHeadDiskFull(t *testing.T) {
	fs := &faultFS{FS: vfs.NewMem()}
	h := mustOpenHead(t, fs, testOpts(nil))
	a := h.Appender()
	acked := ingesttest.Model{}
	key := ingesttest.SeriesKey(1, 1, 1)
	commit := func(i int) error {
		p := series.IntPoint(t0+int64(i), int64(i))
		a.AppendKey(key, p)
		err := a.Commit(false)
		if err == nil {
			acked.Add(key, p)
		}
		return err
	}
	for i := range 100 {
		if err := commit(i); err != nil {
			t.Fatal(err)
		}
	}
	fs.setFull(true)
	for i := 100; i < 200; i++ {
		if err := commit(i); !errors.Is(err, wal.ErrDiskFull) {
			t.Fatalf("commit on a full disk: %v", err)
		}
	}
	fs.setFull(false)
	for i := 200; i < 300; i++ {
		if err := commit(i); err != nil {
			t.Fatalf("commit after space returned: %v", err)
		}
	}
	acked.Check(t, h) // failed commits are not visible
	h.Close()
	h = mustOpenHead(t, fs, testOpts(nil))
	defer h.Close()
	acked.Check(t, h)
}

func TestHeadConcurrent(t *testing.T) {
	fs := vfs.NewMem()
	h := mustOpenHead(t, fs, testOpts(nil))
	const writers = 4
	models := make([]ingesttest.Model, writers)
	var wg sync.WaitGroup
	for w := range writers {
		models[w] = ingesttest.Model{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Writers share series 0..9 but never a timestamp.
			a := h.Appender()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range 5000 {
				key := ingesttest.SeriesKey(1, 1, uint32(rng.IntN(10)))
				p := series.IntPoint(t0+int64(i*writers+w), int64(i))
				if _, err := a.AppendKey(key, p); err != nil {
					t.Error(err)
					return
				}
				models[w].Add(key, p)
				if i%50 == 49 {
					if err := a.Commit(false); err != nil {
						t.Error(err)
						return
					}
				}
			}
			a.Commit(false)
		}()
	}
	readDone := make(chan struct{})
	go func() { // readers run against writers
		defer close(readDone)
		for range 200 {
			h.AppendPoints(nil, ingesttest.SeriesKey(1, 1, 3), 0, 1<<62)
		}
	}()
	wg.Wait()
	<-readDone
	all := ingesttest.Model{}
	for _, m := range models {
		for k, ps := range m {
			for _, p := range ps {
				all.Add([]byte(k), p)
			}
		}
	}
	all.Check(t, h)
	h.Close()
	h = mustOpenHead(t, fs, testOpts(nil))
	defer h.Close()
	all.Check(t, h)
}

func TestOldestSegment(t *testing.T) {
	h := mustOpenHead(t, vfs.NewMem(), testOpts(nil))
	defer h.Close()
	if _, ok := h.OldestSegment(); ok {
		t.Fatal("an empty head has an oldest segment")
	}
	appendRandom(t, h, rand.New(rand.NewPCG(5, 5)), ingesttest.Keys(5), 20_000, ingesttest.Model{})
	seg, ok := h.OldestSegment()
	if !ok || seg != 1 || h.log.Segment() < 3 {
		t.Fatalf("oldest segment %d %v, current %d", seg, ok, h.log.Segment())
	}
}

// TestAppendAllocs: in steady state (rows sized after a first hour) a
// commit of 100 points through log and head does not allocate, nor does a
// read into a reused slice.
func TestAppendAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	opts := testOpts(nil)
	opts.WAL.SegmentSize = 0 // MemFS grows files by allocating: use the OS
	h := mustOpenHead(t, vfs.Default, opts)
	defer h.Close()
	a := h.Appender()
	var refs []SeriesRef
	for i := range 100 {
		ref, err := h.Ref(ingesttest.SeriesKey(1, 1, uint32(i)))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	tm := int64(t0)
	batch := func() {
		for _, ref := range refs {
			a.Append(ref, series.Float64Point(tm, float64(tm%1000)/10))
		}
		tm += 10_000
		if err := a.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	for range 360 + 10 { // one hour, then into the next row
		batch()
	}
	if n := testing.AllocsPerRun(100, batch); n != 0 {
		t.Fatalf("%.1f allocations per commit of 100 points", n)
	}
	key := ingesttest.SeriesKey(1, 1, 5)
	dst := h.AppendPoints(nil, key, 0, 1<<62)
	if n := testing.AllocsPerRun(50, func() { dst = h.AppendPoints(dst[:0], key, 0, 1<<62) }); n != 0 {
		t.Fatalf("%.1f allocations per read", n)
	}
	rows := h.AppendRows(nil, key, 0, 1<<62)
	if n := testing.AllocsPerRun(50, func() {
		rows = h.AppendRows(rows[:0], key, 0, 1<<62)
		dst, _, _ = h.AppendRowPoints(dst[:0], key, rows[0].Base)
	}); n != 0 || len(rows) != 2 {
		t.Fatalf("%.1f allocations per row listing and row read (%d rows)", n, len(rows))
	}
}
