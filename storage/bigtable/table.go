package bigtable

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	bt "cloud.google.com/go/bigtable"

	"github.com/tsd-db/tsd/storage"
)

// table is a storage.Table on one Bigtable table. Its spec is shared by
// every caller of DB.Table and replaced by EnsureTable.
type table struct {
	db   *DB
	name string
	bt   *bt.Table
	spec atomic.Pointer[storage.TableSpec]
}

var _ storage.Table = (*table)(nil)

func newTable(db *DB, spec storage.TableSpec) *table {
	t := &table{db: db, name: spec.Name, bt: db.client.Open(spec.Name)}
	t.setSpec(spec)
	return t
}

func (t *table) setSpec(spec storage.TableSpec) { t.spec.Store(&spec) }

// Spec returns the table's name and families as last read from the server.
func (t *table) Spec() storage.TableSpec { return *t.spec.Load() }

func (t *table) step(op string, row []byte) string {
	return fmt.Sprintf("%s %s row %q", op, t.name, row)
}

// Get reads one row through the read-time limits of its families.
func (t *table) Get(ctx context.Context, row []byte, opts *storage.ReadOptions) ([]storage.Cell, error) {
	cells, _, err := t.GetAppend(ctx, nil, nil, row, opts)
	return cells, err
}

// GetAppend is Get into the caller's memory: the client's row is copied
// into buf and its cells appended to dst (appendRowOwned).
func (t *table) GetAppend(ctx context.Context, dst []storage.Cell, buf []byte, row []byte, opts *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	spec := t.Spec()
	if err := validateRead(spec, row, opts); err != nil {
		return dst, buf, err
	}
	filter := readFilter(spec, opts, t.db.nowTimestamp())
	var r bt.Row
	err := t.db.call(ctx, t.step("get", row), func(ctx context.Context) (err error) {
		r, err = t.bt.ReadRow(ctx, string(row), readOpts(filter)...)
		return err
	})
	if err != nil {
		return dst, buf, err
	}
	n := len(dst)
	if dst, buf = appendRowOwned(dst, buf, r); len(dst) == n {
		return dst, buf, fmt.Errorf("bigtable: get %s row %q: %w", t.name, row, storage.ErrNotFound)
	}
	return dst, buf, nil
}

func validateRead(spec storage.TableSpec, row []byte, opts *storage.ReadOptions) error {
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	return storage.ValidateRead(spec, opts)
}

// readOpts wraps a filter that may be nil (read everything).
func readOpts(f bt.Filter) []bt.ReadOption {
	if f == nil {
		return nil
	}
	return []bt.ReadOption{bt.RowFilter(f)}
}

// splitColumn splits the client's "family:qualifier" column name. Family
// names cannot contain ':', so the first one separates them.
func splitColumn(col string) (family, qualifier string) {
	i := strings.IndexByte(col, ':')
	if i < 0 {
		return col, ""
	}
	return col[:i], col[i+1:]
}
