package uid

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openDB opens the real embedded engine on a temporary directory.
func openDB(t testing.TB) storage.DB {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openMemDB opens the real embedded engine on an in-memory filesystem, for
// tests whose subject is the assignment protocol rather than durability:
// it spares them one fsync per write.
func openMemDB(t testing.TB) storage.DB {
	t.Helper()
	db, err := pebble.Open("/uid", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openUIDs opens a UIDs with a quiet logger on db.
func openUIDs(t testing.TB, db storage.DB, o Options) *UIDs {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quiet
	}
	u, err := Open(context.Background(), db, &o)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustResolve(t testing.TB, u *UIDs, k Kind, name string) ID {
	t.Helper()
	id, err := u.Resolve(context.Background(), k, []byte(name))
	if err != nil {
		t.Fatalf("resolve %s %q: %v", k, name, err)
	}
	return id
}

// rawGet reads one cell value straight from storage; nil when absent.
func rawGet(t testing.TB, tbl storage.Table, row []byte, fam, qual string) []byte {
	t.Helper()
	cells, err := tbl.Get(context.Background(), row, &storage.ReadOptions{Families: []string{fam}, Qualifiers: [][]byte{[]byte(qual)}})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cells[0].Value
}

func rawPut(t testing.TB, tbl storage.Table, row []byte, fam, qual string, val []byte) {
	t.Helper()
	err := tbl.Put(context.Background(), row, []storage.Cell{{Family: fam, Qualifier: []byte(qual), Value: val}})
	if err != nil {
		t.Fatal(err)
	}
}

func rawDelete(t testing.TB, tbl storage.Table, row []byte, fam, qual string) {
	t.Helper()
	err := tbl.Delete(context.Background(), row, storage.Deletion{Kind: storage.DeleteColumn, Family: fam, Qualifier: []byte(qual)})
	if err != nil {
		t.Fatal(err)
	}
}

func be8(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// flakyTable injects retryable failures in front of a real table: the
// next failIncr Increments and failCAS CheckAndPuts fail before reaching it.
type flakyTable struct {
	storage.Table
	failIncr, failCAS atomic.Int32
}

var errFlaky = storage.MarkRetryable(errors.New("injected: unavailable"))

func (f *flakyTable) Increment(ctx context.Context, row []byte, fam string, q []byte, d int64) (int64, error) {
	if f.failIncr.Add(-1) >= 0 {
		return 0, errFlaky
	}
	return f.Table.Increment(ctx, row, fam, q, d)
}

func (f *flakyTable) CheckAndPut(ctx context.Context, row []byte, fam string, q, exp []byte, cells []storage.Cell) error {
	if f.failCAS.Add(-1) >= 0 {
		return errFlaky
	}
	return f.Table.CheckAndPut(ctx, row, fam, q, exp, cells)
}
