package flush

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/internal/vfstest"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const t0 = ingesttest.T0

// headOpts are the tests' head options (ingest/head's testOpts).
func headOpts() *head.HeadOptions {
	return &head.HeadOptions{Logger: ingesttest.Quiet, WAL: ingesttest.WAL}
}

func openHead(t testing.TB, fs vfs.FS, opts *head.HeadOptions) *head.Head {
	t.Helper()
	return ingesttest.OpenHead(t, head.OpenHead, fs, opts)
}

// openStore opens a pebble store on fs (ingesttest.NewStore).
func openStore(t testing.TB, fs vfs.FS) *ingesttest.Store { return openStoreAt(t, fs, "db") }

func openStoreAt(t testing.TB, fs vfs.FS, dir string) *ingesttest.Store {
	db, err := tsdpebble.Open(dir, &tsdpebble.Options{FS: fs, Logger: ingesttest.Quiet, GCInterval: -1})
	return ingesttest.NewStore(t, db, err)
}

// openMem opens a store and a head with opts on a new memory FS; both
// close when tb ends.
func openMem(tb testing.TB, opts *head.HeadOptions) (*ingesttest.Store, *head.Head) {
	tb.Helper()
	fs := vfs.NewMem()
	s := openStore(tb, fs)
	tb.Cleanup(func() { s.DB.Close() })
	h := openHead(tb, fs, opts)
	tb.Cleanup(func() { h.Close() })
	return s, h
}

// openAtArrival is openMem with a head whose clock reads *arrival, so a
// test stamps its points' arrival and moves it.
func openAtArrival(tb testing.TB, arrival *int64) (*ingesttest.Store, *head.Head) {
	tb.Helper()
	opts := headOpts()
	opts.Clock = func() time.Time { return time.UnixMilli(*arrival) }
	return openMem(tb, opts)
}

// appendRandom commits n random points through a new appender of h
// (ingesttest.AppendRandom).
func appendRandom(t testing.TB, h *head.Head, rng *rand.Rand, keys [][]byte, n int, m ingesttest.Model) {
	t.Helper()
	ingesttest.AppendRandom(t, h.Appender(), rng, keys, n, m)
}

func flushOpts(s *ingesttest.Store) *FlushOptions {
	return &FlushOptions{Table: s.Tbl, WriterID: 7, Grace: time.Minute}
}

// logSegments returns the first and the last segment file in the head's
// log directory.
func logSegments(t testing.TB, h *head.Head) (first, last uint32) {
	t.Helper()
	names, err := h.FS().List(h.LogDir())
	if err != nil {
		t.Fatal(err)
	}
	suffix := strings.TrimLeft(wal.SegmentName(0), "0")
	for _, name := range names {
		digits, ok := strings.CutSuffix(name, suffix)
		seg, err := strconv.ParseUint(digits, 10, 32)
		if !ok || err != nil {
			continue
		}
		if first == 0 || uint32(seg) < first {
			first = uint32(seg)
		}
		last = max(last, uint32(seg))
	}
	return first, last
}

func firstSegment(t testing.TB, h *head.Head) uint32 {
	t.Helper()
	first, _ := logSegments(t, h)
	return first
}

// seriesMemory is the memory a head accounts for when it holds the series
// of keys and no row.
func seriesMemory(t testing.TB, keys [][]byte) int64 {
	t.Helper()
	h := openHead(t, vfs.NewMem(), headOpts())
	defer h.Close()
	for _, k := range keys {
		if _, err := h.Ref(k); err != nil {
			t.Fatal(err)
		}
	}
	return h.MemoryBytes()
}

func TestFlushRows(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	opts := headOpts()
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + 2*head.RowSpan) }
	h := openHead(t, fs, opts)
	defer h.Close()
	m := ingesttest.Model{}
	appendRandom(t, h, rand.New(rand.NewPCG(11, 11)), ingesttest.Keys(20), 5000, m)
	f, err := NewFlusher(h, flushOpts(s))
	if err != nil {
		t.Fatal(err)
	}
	memBefore := h.MemoryBytes()
	// Hours 0 and 1 are over and quiet; hour 2 is not over.
	now := time.UnixMilli(t0 + 2*head.RowSpan + 2*time.Minute.Milliseconds())
	st, err := f.Flush(context.Background(), now, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 40 || st.Columns != 40 {
		t.Fatalf("flushed %+v, want the 40 rows of hours 0 and 1", st)
	}
	m.CheckSplit(t, h, s, t0+2*head.RowSpan)
	if h.MemoryBytes() >= memBefore {
		t.Fatalf("memory %d after flushing, %d before", h.MemoryBytes(), memBefore)
	}
	// Rows of hours 2 and 3 hold points from segment 1 on: nothing to delete.
	if oldest, _ := h.OldestSegment(); firstSegment(t, h) != oldest || st.TruncatedBefore != oldest {
		t.Fatalf("log starts at segment %d after the flush (stats %d), oldest needed %d", firstSegment(t, h), st.TruncatedBefore, oldest)
	}

	// A late point for a flushed hour becomes a second column that wins.
	key := ingesttest.Keys(1)[0]
	late := series.Float64Point(m.Points(string(key), t0, t0+head.RowSpan)[0].T, 42)
	a := h.Appender()
	a.AppendKey(key, late)
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	m.Add(key, late)
	if _, err := f.Flush(context.Background(), now.Add(time.Hour), true); err != nil {
		t.Fatal(err)
	}
	m.CheckSplit(t, h, s, t0+4*head.RowSpan)
	if first, cur := logSegments(t, h); first != cur || cur < 2 {
		t.Fatalf("after flushing everything the log keeps segments %d..%d", first, cur)
	}
	if _, cols := s.Points(t, key, t0); cols != 2 {
		t.Fatalf("row with a late point has %d columns, want 2", cols)
	}
	if h.MemoryBytes() != seriesMemory(t, ingesttest.Keys(20)) { // all row memory released
		t.Fatalf("empty head holds %d bytes for %d series", h.MemoryBytes(), h.NumSeries())
	}
	// Everything is flushed: the log holds no point any more.
	h.Close()
	h = openHead(t, fs, headOpts())
	if st := h.ReplayStats(); st.Samples != 0 {
		t.Fatalf("after a full flush, replay still found %d samples", st.Samples)
	}
}

func TestFlushFailureKeepsRows(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	h := openHead(t, fs, headOpts())
	defer h.Close()
	m := ingesttest.Model{}
	appendRandom(t, h, rand.New(rand.NewPCG(12, 12)), ingesttest.Keys(5), 5000, m)
	f, err := NewFlusher(h, flushOpts(s))
	if err != nil {
		t.Fatal(err)
	}
	s.DB.Close() // every write now fails
	mem := h.MemoryBytes()
	if _, err := f.Flush(context.Background(), time.UnixMilli(t0+10*head.RowSpan), true); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("flush into a closed store: %v", err)
	}
	m.Check(t, h)
	if h.MemoryBytes() != mem || firstSegment(t, h) != 1 {
		t.Fatalf("after a failed flush: memory %d (was %d), log starts at %d", h.MemoryBytes(), mem, firstSegment(t, h))
	}
}

// TestFlushCrash: one crash clone of the file system holding both the log
// and the store keeps every point committed with sync, in one of them.
func TestFlushCrash(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for iter := range 4 {
		fs := vfs.NewCrashableMem()
		s := openStore(t, fs)
		opts := headOpts()
		clock := int64(t0)
		opts.Clock = func() time.Time { return time.UnixMilli(clock) }
		h := openHead(t, fs, opts)
		f, err := NewFlusher(h, flushOpts(s))
		if err != nil {
			t.Fatal(err)
		}
		m := ingesttest.Model{}
		a := h.Appender()
		keys := ingesttest.Keys(8)
		for i := range 3000 {
			key := keys[rng.IntN(len(keys))]
			p := series.IntPoint(t0+int64(i)*3000, int64(i))
			clock = p.T
			a.AppendKey(key, p)
			m.Add(key, p)
			if i%100 == 99 {
				if err := a.Commit(true); err != nil {
					t.Fatal(err)
				}
			}
			if i%1000 == 999 {
				if _, err := f.Flush(context.Background(), time.UnixMilli(p.T+head.RowSpan), false); err != nil {
					t.Fatal(err)
				}
			}
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rng})
		h.Close()
		s.DB.Close()
		s2 := openStore(t, clone)
		h2 := openHead(t, clone, headOpts())
		for key, ps := range m {
			var got []series.Point
			for base := int64(t0); base < t0+3*head.RowSpan; base += head.RowSpan {
				stored, _ := s2.Points(t, []byte(key), base)
				got = append(got, stored...)
			}
			got = append(got, h2.AppendPoints(nil, []byte(key), 0, 1<<62)...)
			slices.SortFunc(got, func(a, b series.Point) int { return cmp.Compare(a.T, b.T) })
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
		s2.DB.Close()
	}
}

func TestFlusherOptions(t *testing.T) {
	h := openHead(t, vfs.NewMem(), headOpts())
	defer h.Close()
	s := openStore(t, vfs.NewMem())
	defer s.DB.Close()
	for name, o := range map[string]*FlushOptions{
		"no table":  {WriterID: 1},
		"writer 0":  {Table: s.Tbl},
		"widths":    {Table: s.Tbl, WriterID: 1, Layout: &rowkey.Layout{Widths: series.Widths{Metric: 4, TagK: 3, TagV: 3}}},
		"neg grace": {Table: s.Tbl, WriterID: 1, Grace: -time.Second},
	} {
		if _, err := NewFlusher(h, o); err == nil {
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

// TestFlushSeqDamagedByte flips every byte of a FLUSHSEQ file in several
// ways: each open reads the bound the file held, never a lower one, and
// writes the file whole again; the 4-byte form tsd wrote before still
// reads; a file with no copy that checks out is refused naming it. Before,
// the file was the bound alone: a flip that lowered it let flush numbers
// repeat, so two flushes of a row could write the same qualifier.
func TestFlushSeqDamagedByte(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll("d", 0o755)
	s, err := openFlushSeq(fs, "d")
	if err != nil {
		t.Fatal(err)
	}
	for range 3*seqBlock + 5 {
		if _, err := s.take(); err != nil {
			t.Fatal(err)
		}
	}
	good := vfstest.ReadFile(t, fs, "d/"+seqFileName)
	if len(good) != 16 {
		t.Fatalf("FLUSHSEQ holds %d bytes, want 16", len(good))
	}
	for at := range good {
		for _, x := range []byte{0x01, 0x10, 0x80, 0xff} {
			b := append([]byte(nil), good...)
			b[at] ^= x
			vfstest.WriteFile(t, fs, "d/"+seqFileName, b)
			s, err := openFlushSeq(fs, "d")
			if err != nil || s.limit != 4*seqBlock {
				t.Fatalf("byte %d ^ %02x: bound %d, %v; want %d", at, x, s.limit, err, 4*seqBlock)
			}
			if after := vfstest.ReadFile(t, fs, "d/"+seqFileName); string(after) != string(good) {
				t.Fatalf("byte %d ^ %02x: file %x after open, want %x", at, x, after, good)
			}
		}
	}
	vfstest.WriteFile(t, fs, "d/"+seqFileName, []byte{0, 3, 0, 0})
	if s, err := openFlushSeq(fs, "d"); err != nil || s.limit != 3*seqBlock {
		t.Fatalf("4-byte form: %v", err)
	}
	bad := append([]byte(nil), good...)
	bad[1] ^= 1
	bad[13] ^= 1
	mixed := binary.BigEndian.AppendUint32(append([]byte(nil), good[:8]...), 1)
	mixed = binary.BigEndian.AppendUint32(mixed, guardSum(1)) // checks out, disagrees
	for _, b := range [][]byte{bad, good[:15], mixed} {
		vfstest.WriteFile(t, fs, "d/"+seqFileName, b)
		if _, err := openFlushSeq(fs, "d"); err == nil || !strings.Contains(err.Error(), seqFileName) {
			t.Errorf("%x: %v, want an error naming the file", b, err)
		}
	}
}

func TestFlushLoop(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	h, _ := liveHead(t, fs, 5)
	defer h.Close()
	a := h.Appender()
	key := ingesttest.SeriesKey(1, 1, 1)
	a.AppendKey(key, series.IntPoint(t0, 5)) // hours ago, arrived "now"
	a.Commit(false)
	f, err := NewFlusher(h, &FlushOptions{Table: s.Tbl, WriterID: 3, Grace: time.Millisecond, Spread: -1})
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
	if pts, _ := s.Points(t, key, t0); len(pts) != 1 || pts[0] != series.IntPoint(t0, 5) {
		t.Fatalf("background flush wrote %v", pts)
	}
}

// TestHeadDeleteDuringFlush deletes while a full flush is writing the same
// rows: once DeleteRange returns, no point of the range is left in the
// head, open or being written, so a store delete made after it removes
// every copy.
func TestHeadDeleteDuringFlush(t *testing.T) {
	fs := vfs.NewMem()
	st := openStore(t, fs)
	defer st.DB.Close()
	h := openHead(t, fs, headOpts())
	defer h.Close()
	keys := ingesttest.Keys(40)
	appendRandom(t, h, rand.New(rand.NewPCG(8, 8)), keys, 20_000, ingesttest.Model{})
	f, err := NewFlusher(h, flushOpts(st))
	if err != nil {
		t.Fatal(err)
	}
	strs := make([]string, len(keys))
	for i, k := range keys {
		strs[i] = string(k)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Flush(context.Background(), time.Now(), true)
		done <- err
	}()
	if err := h.DeleteRange(context.Background(), strs, 0, 1<<62); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if pts := h.AppendPoints(nil, k, 0, 1<<62); len(pts) != 0 {
			t.Fatalf("series %x: %d points left after the delete", k, len(pts))
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// moverLog records the rows a flusher tells its RowMover of.
type moverLog struct {
	fps   map[string]uint64 // by row key: the head fingerprint
	cells int
}

func (m *moverLog) RowMoved(tsuid []byte, base int64, headFP uint64, key []byte, cells []storage.Cell) {
	m.fps[string(key)] = headFP
	m.cells += len(cells)
}

// TestFlushTellsMover: a failed write tells the RowMover of no row; a
// written one tells it of each row under the fingerprint the head listed
// it by, with the one column it wrote.
func TestFlushTellsMover(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	h := openHead(t, fs, headOpts())
	defer h.Close()
	keys := ingesttest.Keys(3)
	appendRandom(t, h, rand.New(rand.NewPCG(13, 13)), keys, 600, ingesttest.Model{})
	want := map[uint64]bool{} // the head's fingerprints of every row
	for _, k := range keys {
		for hour := int64(t0) - head.RowSpan; hour < t0+10*head.RowSpan; hour += head.RowSpan {
			if _, fp, ok := h.AppendRowPoints(nil, k, hour); ok {
				want[fp] = true
			}
		}
	}
	now := time.UnixMilli(t0 + 10*head.RowSpan)
	m := &moverLog{fps: map[string]uint64{}}
	opts := flushOpts(s)
	opts.Moved = m
	f, err := NewFlusher(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.DB.Close() // every write fails
	if _, err := f.Flush(context.Background(), now, true); err == nil || len(m.fps) != 0 {
		t.Fatalf("failed flush: err %v, %d rows told", err, len(m.fps))
	}

	s = openStore(t, fs)
	defer s.DB.Close()
	opts.Table = s.Tbl
	if f, err = NewFlusher(h, opts); err != nil {
		t.Fatal(err)
	}
	st, err := f.Flush(context.Background(), now, true)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(m.fps)) != st.Rows || int64(m.cells) != st.Columns || len(want) != len(m.fps) {
		t.Fatalf("told of %d rows (%d cells), flushed %+v, head listed %d", len(m.fps), m.cells, st, len(want))
	}
	for key, fp := range m.fps {
		if !want[fp] {
			t.Fatalf("row %x told under fingerprint %x, which the head never listed", key, fp)
		}
	}
}
