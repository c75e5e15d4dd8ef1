package head

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid/index"
)

var _ SeriesToucher = (*index.Index)(nil) // the series index is the head's toucher

// countTable is a real meta table that counts its writes by operation and
// kind of index row, and fails them with a retryable error while fail is
// set, as an unavailable store does.
type countTable struct {
	storage.Table
	fail  atomic.Bool
	mu    sync.Mutex
	calls map[string]int // guarded by mu; "checkandput series", ...
}

func (t *countTable) note(op string, row []byte) error {
	kind := "other"
	switch {
	case len(row) > 0 && row[0] == 0:
		kind = "counter"
	case len(row) > 1 && row[0] == 1 && row[1] == 'T':
		kind = "series"
	case len(row) > 1 && row[0] == 1 && row[1] == 'L':
		kind = "log"
	}
	t.mu.Lock()
	if t.calls == nil {
		t.calls = map[string]int{}
	}
	t.calls[op+" "+kind]++
	t.mu.Unlock()
	if t.fail.Load() {
		return ingesttest.ErrUnavailable
	}
	return nil
}

func (t *countTable) count(call string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls[call]
}

func (t *countTable) total() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.calls {
		n += c
	}
	return n
}

func (t *countTable) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	if err := t.note("put", row); err != nil {
		return err
	}
	return t.Table.Put(ctx, row, cells)
}

func (t *countTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	if err := t.note("apply", nil); err != nil {
		return err
	}
	return t.Table.Apply(ctx, muts)
}

func (t *countTable) Increment(ctx context.Context, row []byte, fam string, q []byte, d int64) (int64, error) {
	if err := t.note("increment", row); err != nil {
		return 0, err
	}
	return t.Table.Increment(ctx, row, fam, q, d)
}

func (t *countTable) CheckAndPut(ctx context.Context, row []byte, fam string, q, exp []byte, cells []storage.Cell) error {
	if err := t.note("checkandput", row); err != nil {
		return err
	}
	return t.Table.CheckAndPut(ctx, row, fam, q, exp, cells)
}

// countedIndex is a real series index counting the head's calls.
type countedIndex struct {
	*index.Index
	single, batches atomic.Int64
}

func (c *countedIndex) RegisterSeries(key []byte) error {
	c.single.Add(1)
	return c.Index.RegisterSeries(key)
}

func (c *countedIndex) RegisterSeriesBatch(keys [][]byte) error {
	c.batches.Add(1)
	return c.Index.RegisterSeriesBatch(keys)
}

// regStack is a head whose registrar is a series index on the embedded
// engine on disk.
type regStack struct {
	db     *tsdpebble.DB
	meta   *countTable
	reg    *countedIndex
	h      *Head
	walDir string
}

func openRegStack(t *testing.T) *regStack {
	t.Helper()
	db, err := tsdpebble.Open(t.TempDir(), &tsdpebble.Options{Logger: slog.New(slog.DiscardHandler), GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := &regStack{db: db, walDir: t.TempDir()}
	s.meta, s.reg = s.openIndex(t, "tsdb-meta")
	s.h = s.openHead(t)
	t.Cleanup(func() {
		s.h.Close()
		s.reg.Close()
		s.db.Close()
	})
	return s
}

// openIndex opens a series index on the meta table name, created if new.
func (s *regStack) openIndex(t *testing.T, name string) (*countTable, *countedIndex) {
	t.Helper()
	ctx := context.Background()
	if err := s.db.EnsureTable(ctx, schema.MetaTableSpec(name)); err != nil {
		t.Fatal(err)
	}
	tbl, err := s.db.Table(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	meta := &countTable{Table: tbl}
	ix, err := index.Open(ctx, meta, nil, &index.Options{RefreshInterval: -1, RetryBackoff: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return meta, &countedIndex{Index: ix}
}

func (s *regStack) openHead(t *testing.T) *Head {
	t.Helper()
	h, err := OpenHead(vfs.Default, s.walDir, testOpts(s.reg))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = ingesttest.SeriesKey(1, 1, uint32(i+1))
	}
	return keys
}

// pointsOf returns the head's points of key.
func pointsOf(h *Head, key []byte) []series.Point {
	return h.AppendPoints(nil, key, 0, MaxTimestamp)
}

// TestCommitRegistersNewSeriesTogether: appends of new series write
// nothing to the index; their commit registers them all with one
// registrar call, one log record and one id reservation (not two synced
// writes per series), and every series row is stored when Commit returns.
func TestCommitRegistersNewSeriesTogether(t *testing.T) {
	const n = 300
	s := openRegStack(t)
	keys := newKeys(n)
	a := s.h.Appender()
	for _, k := range keys {
		if _, err := a.AppendKey(k, series.IntPoint(t0, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.meta.total(); got != 0 || s.h.NumSeries() != 0 {
		t.Fatalf("before Commit: %d index writes, %d series; want none", got, s.h.NumSeries())
	}
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	if b, one := s.reg.batches.Load(), s.reg.single.Load(); b != 1 || one != 0 {
		t.Errorf("registrar calls: %d batches, %d single; want 1, 0", b, one)
	}
	claims, logs, incs := s.meta.count("checkandput series"), s.meta.count("checkandput log"), s.meta.count("increment counter")
	if claims != n || logs != 1 || incs > 2 || s.meta.total() != claims+logs+incs {
		t.Errorf("index writes for %d new series: %d claims, %d log records, %d increments, %d in all; want %d, 1, <= 2",
			n, claims, logs, incs, s.meta.total(), n)
	}
	if s.h.NumSeries() != n || s.reg.Len() != n {
		t.Errorf("%d series in the head, %d in the index; want %d", s.h.NumSeries(), s.reg.Len(), n)
	}
	for _, k := range keys {
		if _, ok := s.reg.Lookup(k); !ok || len(pointsOf(s.h, k)) != 1 {
			t.Fatalf("series %x: in the index %v, points %v", k, ok, pointsOf(s.h, k))
		}
	}
	// The series rows are stored: another index loads every series.
	_, other := s.openIndex(t, "tsdb-meta")
	defer other.Close()
	if other.Len() != n {
		t.Errorf("an index opened after the commit loads %d series, want %d", other.Len(), n)
	}
}

// TestCommitNewSeriesConcurrent: two appenders committing the same new
// series at once end with one series each in the head and in the index,
// created once (never claimed twice), holding both appenders' points.
func TestCommitNewSeriesConcurrent(t *testing.T) {
	const n = 200
	s := openRegStack(t)
	keys := newKeys(n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 2)
	for w := range 2 {
		a := s.h.Appender()
		order := slices.Clone(keys)
		if w == 1 {
			slices.Reverse(order)
		}
		for _, k := range order {
			if _, err := a.AppendKey(k, series.IntPoint(t0+int64(w), int64(w))); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[w] = a.Commit(false)
		}()
	}
	close(start)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("commits: %v, %v", errs[0], errs[1])
	}
	st := s.reg.Stats()
	if s.h.NumSeries() != n || st.Series != n || st.Created != n || st.Adopted != 0 {
		t.Errorf("head %d series, index %+v; want %d series created once each", s.h.NumSeries(), st, n)
	}
	ids := map[index.SeriesID]bool{}
	for _, k := range keys {
		id, ok := s.reg.Lookup(k)
		if got := pointsOf(s.h, k); !ok || len(got) != 2 {
			t.Fatalf("series %x: in the index %v, points %v; want both appenders' points", k, ok, got)
		}
		ids[id] = true
	}
	if len(ids) != n {
		t.Errorf("%d distinct ids for %d series", len(ids), n)
	}
}

// TestCommitRegistrationFails: when the index cannot store the new series,
// Commit fails with a retryable error and nothing of the commit is
// visible, not even its points of known series, nor after a restart; the
// same series commit once the store is back.
func TestCommitRegistrationFails(t *testing.T) {
	const n = 50
	s := openRegStack(t)
	known := ingesttest.SeriesKey(2, 1, 1)
	a := s.h.Appender()
	if _, err := a.AppendKey(known, series.IntPoint(t0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	s.meta.fail.Store(true)
	keys := newKeys(n)
	refs := make([]SeriesRef, n)
	a.AppendKey(known, series.IntPoint(t0+1, 2))
	for i, k := range keys {
		var err error
		if refs[i], err = a.AppendKey(k, series.IntPoint(t0, 3)); err != nil {
			t.Fatal(err)
		}
	}
	err := a.Commit(true)
	if err == nil || !IsRetryable(err) {
		t.Fatalf("commit with the index's store down: %v, want a retryable error", err)
	}
	check := func(when string, knownPts, newPts int) {
		t.Helper()
		if got := pointsOf(s.h, known); len(got) != knownPts {
			t.Errorf("%s: known series holds %v, want %d points", when, got, knownPts)
		}
		for _, k := range keys {
			if got := pointsOf(s.h, k); len(got) != newPts {
				t.Fatalf("%s: new series %x holds %v, want %d points", when, k, got, newPts)
			}
		}
	}
	check("after the failed commit", 1, 0)
	if s.h.NumSeries() != 1 || s.reg.Len() != 1 {
		t.Errorf("after the failed commit: %d series in the head, %d in the index; want 1", s.h.NumSeries(), s.reg.Len())
	}
	// The store is back: the refs handed out (a NameAppender's cache) work.
	s.meta.fail.Store(false)
	for _, ref := range refs {
		if err := a.Append(ref, series.IntPoint(t0+5, 4)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Commit(false); err != nil {
		t.Fatalf("commit after the store came back: %v", err)
	}
	check("after the retry", 1, 1)
	if s.h.NumSeries() != n+1 || s.reg.Len() != n+1 {
		t.Errorf("after the retry: %d series in the head, %d in the index; want %d", s.h.NumSeries(), s.reg.Len(), n+1)
	}
	// A restart replays only what was acknowledged.
	s.h.Close()
	s.h = s.openHead(t)
	check("after a restart", 1, 1)
}

// TestReplayRegistersSeriesTogether: at start the head registers the
// series of each log series record with one registrar call per
// registerChunk series, before any of their points is back, here in an
// index that has never seen them.
func TestReplayRegistersSeriesTogether(t *testing.T) {
	const n = 2*registerChunk + 100 // one series record
	s := openRegStack(t)
	keys := newKeys(n)
	a := s.h.Appender()
	for _, k := range keys {
		a.AppendKey(k, series.IntPoint(t0, 1))
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	s.h.Close()
	s.reg.Close()
	_, s.reg = s.openIndex(t, "tsdb-meta-empty")
	s.h = s.openHead(t)
	if b, one := s.reg.batches.Load(), s.reg.single.Load(); b != 3 || one != 0 {
		t.Errorf("replay's registrar calls: %d batches, %d single; want 3, 0", b, one)
	}
	if s.h.NumSeries() != n || s.reg.Len() != n {
		t.Errorf("after replay: %d series in the head, %d in the index; want %d", s.h.NumSeries(), s.reg.Len(), n)
	}
	for _, k := range keys {
		if _, ok := s.reg.Lookup(k); !ok || len(pointsOf(s.h, k)) != 1 {
			t.Fatalf("series %x after replay: in the index %v, points %v", k, ok, pointsOf(s.h, k))
		}
	}
}
