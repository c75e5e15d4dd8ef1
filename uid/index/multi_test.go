package index

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// TestTwoIndexesSameTSUID registers the same TSUIDs from two Indexes on one
// store at the same time: each TSUID must get one id, the same in both.
func TestTwoIndexesSameTSUID(t *testing.T) {
	s := openMemStore(t)
	a, b := s.open(t, nil), s.open(t, nil)
	const n = 40
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = s.tsuid(t, "m", fmt.Sprintf("host=h%d", i))
	}
	var wg sync.WaitGroup
	for _, ix := range []*Index{a, b} {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range keys {
					k := keys[(i+g*7)%n]
					if _, err := ix.Register(context.Background(), k, 0, 0); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	seen := map[SeriesID]bool{}
	for _, k := range keys {
		ida, oka := a.Lookup(k)
		idb, okb := b.Lookup(k)
		if !oka || !okb || ida != idb {
			t.Fatalf("%x: ids %d (%v) and %d (%v), want one id", k, ida, oka, idb, okb)
		}
		if seen[ida] {
			t.Fatalf("id %d given to two TSUIDs", ida)
		}
		seen[ida] = true
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.Created+sb.Created != n || sa.Adopted+sb.Adopted != n {
		t.Fatalf("created %d+%d adopted %d+%d: want %d created once and adopted once", sa.Created, sb.Created, sa.Adopted, sb.Adopted, n)
	}
	// A third Index loads exactly n series.
	if c := s.open(t, nil); c.Len() != n {
		t.Fatalf("a new Index loads %d series, want %d", c.Len(), n)
	}
}

// TestEachSeesTheOther checks that a series and a span extension made in
// one Index reach another on its next refresh.
func TestEachSeesTheOther(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	a, b := s.open(t, nil), s.open(t, nil)
	x := s.tsuid(t, "m", "host=x")
	y := s.tsuid(t, "m", "host=y")
	idx := mustRegister(t, a, x, 5*hourMs, 6*hourMs)
	idy := mustRegister(t, b, y, 7*hourMs, 7*hourMs)
	mustRefresh(t, a)
	mustRefresh(t, b)
	if id, ok := b.Lookup(x); !ok || id != idx {
		t.Fatalf("b sees x as %d %v, want %d", id, ok, idx)
	}
	if id, ok := a.Lookup(y); !ok || id != idy {
		t.Fatalf("a sees y as %d %v, want %d", id, ok, idy)
	}
	if got, _ := b.Series(idx); got.First != 5*3600 || got.Last != 6*3600 {
		t.Fatalf("b's span of x: %+v", got)
	}
	mustRegister(t, a, x, 2*hourMs, 9*hourMs)
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mustRefresh(t, b)
	if got, _ := b.Series(idx); got.First != 2*3600 || got.Last != 9*3600 {
		t.Fatalf("b's span of x after a widened it: %+v", got)
	}
	bm, err := b.Postings(ctx, s.assign(t, uid.Metric, "m"), nil)
	if err != nil || bm.GetCardinality() != 2 {
		t.Fatalf("b's postings of m: %v %v", bm, err)
	}
}

// TestSpansMergeInAnyOrder writes spans from two Indexes in both orders:
// the store keeps the lowest first hour and the highest last hour.
func TestSpansMergeInAnyOrder(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	a, b := s.open(t, nil), s.open(t, nil)
	x := s.tsuid(t, "m", "host=x")
	id := mustRegister(t, a, x, 10*hourMs, 10*hourMs)
	mustRegister(t, b, x, 10*hourMs, 10*hourMs)
	mustRegister(t, a, x, 3*hourMs, 30*hourMs)
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, b, x, 5*hourMs, 20*hourMs) // narrower, written later
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c := s.open(t, nil)
	if got, _ := c.Series(id); got.First != 3*3600 || got.Last != 30*3600 {
		t.Fatalf("stored span %+v, want hours 3..30", got)
	}
	mustRefresh(t, b)
	if got, _ := b.Series(id); got.First != 3*3600 || got.Last != 30*3600 {
		t.Fatalf("b's span after refresh %+v, want hours 3..30", got)
	}
}

// TestCloseWithoutFlush stops an Index as a crash would: every series whose
// registration returned is there on reload, with its registered span.
func TestCloseWithoutFlush(t *testing.T) {
	s := openStore(t)
	a := s.open(t, nil)
	var keys [][]byte
	for i := range 20 {
		k := s.tsuid(t, "m", fmt.Sprintf("host=h%d", i))
		mustRegister(t, a, k, int64(i)*hourMs, int64(i)*hourMs)
		a.Touch(k, 100*hourMs) // not flushed
		keys = append(keys, k)
	}
	a.halt()
	b := s.open(t, nil)
	for i, k := range keys {
		id, ok := b.Lookup(k)
		if !ok {
			t.Fatalf("series %d lost", i)
		}
		if got, _ := b.Series(id); got.First != int64(i)*3600 || got.Last < int64(i)*3600 {
			t.Fatalf("series %d span %+v, want at least hour %d", i, got, i)
		}
	}
}

// TestLogHoles makes records land out of order and a writer stall: the
// reader fills the hole when the record lands, and voids it after
// HoleTimeout when it does not; the stalled writer then logs elsewhere.
func TestLogHoles(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	clock := newFakeClock()
	a, b := s.open(t, nil), s.open(t, nil)
	c := s.open(t, &Options{RefreshInterval: -1, Logger: quiet, Clock: clock.Now})

	late, _, err := a.take(ctx, &a.seqs, nil, 1) // a's block; a stalls before writing
	if err != nil {
		t.Fatal(err)
	}
	y := s.tsuid(t, "m", "host=y")
	mustRegister(t, b, y, 0, 0) // b's record lands after a's number
	mustRefresh(t, c)
	if _, ok := c.Lookup(y); !ok {
		t.Fatal("c missed b's series")
	}
	if len(c.tail.holes) != DefaultSeqBlock {
		t.Fatalf("c has %d holes, want a's block of %d", len(c.tail.holes), DefaultSeqBlock)
	}

	// a's record lands late, in the hole: c finds it.
	x := s.tsuid(t, "m", "host=x")
	rec := appendNewRecord(nil, []item{{id: 1000, sp: span{1, 2}, tsuid: x}})
	if ok, err := a.putRecord(ctx, late[0], rec); !ok || err != nil {
		t.Fatalf("late write: %v %v", ok, err)
	}
	mustRefresh(t, c)
	if id, ok := c.Lookup(x); !ok || id != 1000 {
		t.Fatalf("c missed the late record: %d %v", id, ok)
	}

	// The rest of a's block is never written: c voids it after HoleTimeout.
	mustRefresh(t, c)
	if len(c.tail.holes) != DefaultSeqBlock-1 {
		t.Fatalf("c has %d holes, want %d", len(c.tail.holes), DefaultSeqBlock-1)
	}
	clock.Add(DefaultHoleTimeout + time.Second)
	mustRefresh(t, c)
	if len(c.tail.holes) != 0 || c.Stats().Voided != DefaultSeqBlock-1 {
		t.Fatalf("after HoleTimeout: %d holes, %d voided", len(c.tail.holes), c.Stats().Voided)
	}
	// a wakes up: its next number is voided, so it logs under a new block.
	z := s.tsuid(t, "m", "host=z")
	mustRegister(t, a, z, 0, 0)
	mustRefresh(t, c)
	if _, ok := c.Lookup(z); !ok {
		t.Fatal("c missed the stalled writer's next series")
	}
}

// TestCloseVoidsUnusedNumbers: an Index that closes gives up the rest of
// its block, so readers have no hole to wait for.
func TestCloseVoidsUnusedNumbers(t *testing.T) {
	s := openMemStore(t)
	a, b, c := s.open(t, nil), s.open(t, nil), s.open(t, nil)
	mustRegister(t, a, s.tsuid(t, "m", "host=a"), 0, 0)
	mustRegister(t, b, s.tsuid(t, "m", "host=b"), 0, 0)
	mustRefresh(t, c)
	if len(c.tail.holes) == 0 {
		t.Fatal("expected holes for a's unused numbers")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	mustRefresh(t, c)
	if len(c.tail.holes) != 0 {
		t.Fatalf("%d holes left after a closed", len(c.tail.holes))
	}
}

// TestTrimAndResync trims the log under a reader that lags: it resyncs from
// the series rows and misses nothing.
func TestTrimAndResync(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	a, b := s.open(t, &Options{RefreshInterval: -1, Logger: quiet, SeqBlock: 1}), s.open(t, nil)
	a.tail.trimEvery, a.tail.trimKeep = 8, 2
	for i := range 30 {
		mustRegister(t, a, s.tsuid(t, "m", fmt.Sprintf("host=h%d", i)), 0, 0)
	}
	mustRefresh(t, a)
	low, _, err := a.readLow(ctx)
	if err != nil || low < 20 {
		t.Fatalf("checkpoint %d %v: want it moved past 20", low, err)
	}
	if n := countLogRows(t, s.meta); n > 32-int(low)+1 {
		t.Fatalf("%d log rows left below a checkpoint at %d", n, low)
	}
	mustRefresh(t, b)
	if b.Len() != 30 || b.Stats().Resyncs != 1 {
		t.Fatalf("lagging reader: %d series, %d resyncs; want 30 and 1", b.Len(), b.Stats().Resyncs)
	}
	if c := s.open(t, nil); c.Len() != 30 {
		t.Fatalf("new Index after trim loads %d series", c.Len())
	}
}

func countLogRows(t *testing.T, meta storage.Table) int {
	start, stop := rowRange(tagLog)
	sc := meta.Scan(context.Background(), &storage.ScanOptions{Start: start, Stop: stop, ReadOptions: readIndex})
	n := 0
	for sc.Next() {
		n += len(sc.Row().Cells)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRefreshLoop: the background loop alone brings another Index's series.
func TestRefreshLoop(t *testing.T) {
	s := openMemStore(t)
	a := s.open(t, &Options{RefreshInterval: 20 * time.Millisecond, HoleTimeout: time.Second, Logger: quiet})
	b := s.open(t, nil)
	x := s.tsuid(t, "m", "host=x")
	id := mustRegister(t, b, x, 0, 0)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, ok := a.Lookup(x); ok {
			if got != id {
				t.Fatalf("loop learned id %d, want %d", got, id)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the refresh loop never brought b's series")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stallingTable advances a clock while it writes a log row, once: a writer
// stalled in the middle of its write.
type stallingTable struct {
	storage.Table
	clock *fakeClock
	by    time.Duration
	once  sync.Once
}

func (s *stallingTable) CheckAndPut(ctx context.Context, row []byte, family string, qual, expected []byte, cells []storage.Cell) error {
	err := s.Table.CheckAndPut(ctx, row, family, qual, expected, cells)
	if len(row) == 10 && row[1] == tagLog {
		s.once.Do(func() { s.clock.Add(s.by) })
	}
	return err
}

// TestLateWriteIsLoggedAgain: a record whose write ends later than
// HoleTimeout after its block was reserved may have been voided and trimmed
// meanwhile, so it is written again under a new number.
func TestLateWriteIsLoggedAgain(t *testing.T) {
	s := openMemStore(t)
	clock := newFakeClock()
	st := &stallingTable{Table: s.meta, clock: clock, by: DefaultHoleTimeout}
	a, err := Open(context.Background(), st, s.uids, &Options{RefreshInterval: -1, Logger: quiet, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	x := s.tsuid(t, "m", "host=x")
	id := mustRegister(t, a, x, 0, 0)
	var announced int
	start, stop := rowRange(tagLog)
	sc := s.meta.Scan(context.Background(), &storage.ScanOptions{Start: start, Stop: stop, ReadOptions: readIndex})
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			rec, err := parseRecord(c.Value, nil)
			if err == nil && rec.kind == recNew && rec.items[0].id == id {
				announced++
			}
		}
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if announced != 2 {
		t.Fatalf("series announced %d times, want twice (the late write again)", announced)
	}
}

// TestSpanBeforeSeries: a span record read before the record announcing
// its series waits for it.
func TestSpanBeforeSeries(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	a, b := s.open(t, nil), s.open(t, nil)
	seqs, _, err := a.take(ctx, &a.seqs, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	x := s.tsuid(t, "m", "host=x")
	if ok, err := a.putRecord(ctx, seqs[1], appendHoursRecord(nil, []item{{id: 500, sp: span{1, 50}}})); !ok || err != nil {
		t.Fatal(ok, err)
	}
	mustRefresh(t, b)
	if ok, err := a.putRecord(ctx, seqs[0], appendNewRecord(nil, []item{{id: 500, sp: span{3, 3}, tsuid: x}})); !ok || err != nil {
		t.Fatal(ok, err)
	}
	mustRefresh(t, b)
	if got, ok := b.Series(500); !ok || got.First != 3600 || got.Last != 50*3600 {
		t.Fatalf("series 500: %+v %v, want hours 1..50", got, ok)
	}
}
