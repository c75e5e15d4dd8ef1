package index

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// store is one real store: the meta table and a UID table with its UIDs.
type store struct {
	db   storage.DB
	meta storage.Table
	uids *uid.UIDs
}

// openStore opens the embedded engine on a temporary directory.
func openStore(t testing.TB) *store {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), &pebble.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return newStore(t, db)
}

// openMemStore opens the embedded engine on an in-memory filesystem, for
// tests and benchmarks about the index rather than durability: it spares
// them an fsync per write.
func openMemStore(t testing.TB) *store {
	t.Helper()
	db, err := pebble.Open("/idx", &pebble.Options{FS: vfs.NewMem(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return newStore(t, db)
}

func newStore(t testing.TB, db storage.DB) *store {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if err := db.EnsureTable(ctx, schema.MetaTableSpec(schema.DefaultMetaTable)); err != nil {
		t.Fatal(err)
	}
	meta, err := db.Table(ctx, schema.DefaultMetaTable)
	if err != nil {
		t.Fatal(err)
	}
	u, err := uid.Open(ctx, db, &uid.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return &store{db: db, meta: meta, uids: u}
}

// manual are options for tests that drive Refresh and Flush themselves.
func manual() *Options { return &Options{RefreshInterval: -1, Logger: quiet} }

// open opens an Index on s, closed at cleanup.
func (s *store) open(t testing.TB, o *Options) *Index {
	t.Helper()
	if o == nil {
		o = manual()
	}
	ix, err := Open(context.Background(), s.meta, s.uids, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// tsuid builds the TSUID of metric{tags}, assigning UIDs: tags are given
// as "k=v" and sorted by tag key UID, as row keys order them.
func (s *store) tsuid(t testing.TB, metric string, tags ...string) []byte {
	t.Helper()
	ctx := context.Background()
	out := s.uids.AppendID(nil, uid.Metric, s.assign(t, uid.Metric, metric))
	type pair struct{ k, v uid.ID }
	var ps []pair
	for _, kv := range tags {
		k, v, _ := strings.Cut(kv, "=")
		ps = append(ps, pair{s.assign(t, uid.TagK, k), s.assign(t, uid.TagV, v)})
	}
	_ = ctx
	slices.SortFunc(ps, func(a, b pair) int { return int(a.k) - int(b.k) })
	for _, p := range ps {
		out = s.uids.AppendID(out, uid.TagK, p.k)
		out = s.uids.AppendID(out, uid.TagV, p.v)
	}
	return out
}

func (s *store) assign(t testing.TB, k uid.Kind, name string) uid.ID {
	t.Helper()
	id, err := s.uids.Assign(context.Background(), k, []byte(name))
	if err != nil {
		t.Fatalf("assign %s %q: %v", k, name, err)
	}
	return id
}

// fakeClock is a settable clock for hole and block ages.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const hourMs = 3_600_000

func mustRegister(t testing.TB, ix *Index, tsuid []byte, firstMs, lastMs int64) SeriesID {
	t.Helper()
	id, err := ix.Register(context.Background(), tsuid, firstMs, lastMs)
	if err != nil {
		t.Fatalf("register %x: %v", tsuid, err)
	}
	return id
}

func mustRefresh(t testing.TB, ix *Index) {
	t.Helper()
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh: %v", err)
	}
}
