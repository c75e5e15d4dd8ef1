package read_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/flush"
	ingesthead "github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// stack is the real write path on a pebble engine in a temp dir, as
// cmd/tsd wires it: UIDs, series index, head with its log, flusher.
type stack struct {
	db     *tsdpebble.DB
	data   storage.Table
	uids   *uid.UIDs
	index  *index.Index
	head   *ingesthead.Head
	flush  *flush.Flusher
	layout rowkey.Layout
	app    *ingesthead.NameAppender
	// changes is marked by the head's commits and the flusher's writes,
	// as in the daemon; readers trust it only when given it.
	changes *changes.Tracker
	// moved is the flusher's flush.RowMover: the reader a test sets, as
	// cmd/tsd sets the daemon's query reader.
	moved mover
}

// mover forwards the flusher's rows to a Reader once one is set.
type mover struct{ r atomic.Pointer[read.Reader] }

func (m *mover) RowMoved(tsuid []byte, base int64, fp uint64, key []byte, cells []storage.Cell) {
	if r := m.r.Load(); r != nil {
		r.RowMoved(tsuid, base, fp, key, cells)
	}
}

var quiet = slog.New(slog.DiscardHandler)

func openStack(t testing.TB) *stack {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := tsdpebble.Open(filepath.Join(dir, "db"), &tsdpebble.Options{Logger: quiet, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, spec := range []storage.TableSpec{
		{Name: "tsdb", Families: []storage.FamilySpec{{Name: "t", MaxVersions: 1}}},
		uid.TableSpec("tsdb-uid"), schema.MetaTableSpec("tsdb-meta"),
	} {
		if err := db.EnsureTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	s := &stack{db: db, layout: rowkey.DefaultLayout(), changes: new(changes.Tracker)}
	s.data = mustTable(t, db, "tsdb")
	if s.uids, err = uid.New(mustTable(t, db, "tsdb-uid"), &uid.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	meta := mustTable(t, db, "tsdb-meta")
	if s.index, err = index.Open(ctx, meta, s.uids, &index.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.index.Close() })
	s.head, err = ingesthead.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &ingesthead.HeadOptions{Registrar: s.index, Logger: quiet, Changes: s.changes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.head.Close() })
	if s.flush, err = flush.NewFlusher(s.head, &flush.FlushOptions{Table: s.data, Meta: meta, Layout: &s.layout, WriterID: 3, Changes: s.changes, Moved: &s.moved}); err != nil {
		t.Fatal(err)
	}
	s.app = s.head.NameAppender(s.uids, 0)
	return s
}

func mustTable(t testing.TB, db storage.DB, name string) storage.Table {
	tbl, err := db.Table(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// put appends and commits one point of metric{host=host}.
func (s *stack) put(t testing.TB, metric, host string, p series.Point) {
	t.Helper()
	tags := []uid.Tag{{Key: []byte("host"), Value: []byte(host)}}
	if _, err := s.app.Append(context.Background(), []byte(metric), tags, p); err != nil {
		t.Fatal(err)
	}
	if err := s.app.Commit(false); err != nil {
		t.Fatal(err)
	}
}

// flushAll writes every head row to the store.
func (s *stack) flushAll(t testing.TB) {
	t.Helper()
	if _, err := s.flush.Flush(context.Background(), time.Now(), true); err != nil {
		t.Fatal(err)
	}
}

// reader returns a Reader over the stack with opts' other fields.
func (s *stack) reader(t testing.TB, opts read.Options) *read.Reader {
	t.Helper()
	opts.Data, opts.Layout, opts.Head, opts.Logger = s.data, s.layout, s.head, quiet
	if opts.RowCacheReserve == 0 {
		// Entries from the heap: a test that counts the cache's rows
		// sees each admitted when the policy says, not when the
		// background filler has made room (TestReserve* cover it).
		opts.RowCacheReserve = -1
	}
	if opts.Retention != nil {
		opts.UIDs = s.uids
	}
	r, err := read.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// selection returns every series of metric, as the index lists them.
func (s *stack) selection(t testing.TB, metric string) []index.Series {
	t.Helper()
	ctx := context.Background()
	id, err := s.uids.Lookup(ctx, uid.Metric, []byte(metric))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.index.Postings(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []index.Series
	s.index.ForEach(b, func(x index.Series) bool { out = append(out, x); return true })
	return out
}
