package storebench

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/tsd-db/tsd/storage"
)

// Target is one side of a storage figure.
type Target interface {
	// Put writes a batch of cells, synced.
	Put(ctx context.Context, batch []Cell) error
	// Get reads every cell of row and returns how many there were.
	Get(ctx context.Context, row []byte) (int, error)
	// GetReuse is Get into memory reused from call to call (tsd:
	// storage.Table.GetAppend); it is not safe for concurrent use.
	GetReuse(ctx context.Context, row []byte) (int, error)
	// Scan reads row through a one-row scan and returns its cell count.
	Scan(ctx context.Context, row []byte) (int, error)
	// Close releases the target and its store.
	Close() error
}

// Raw is raw Pebble, every batch committed with pebble.Sync.
type Raw struct {
	db  *pebble.DB
	key []byte
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// OpenRaw opens raw Pebble in dir configured as storage/pebble configures
// it by default (64 MiB cache, 32 MiB memtables, balanced compression, 10-bit
// bloom filters on every level, newest format), but with pebble's default
// comparer and the plain key row‖qualifier: the difference between the two
// sides is the engine's own work.
func OpenRaw(dir string) (*Raw, error) {
	opts := &pebble.Options{
		Logger:             quietLogger{},
		CacheSize:          64 << 20,
		MemTableSize:       32 << 20,
		FormatMajorVersion: pebble.FormatNewest,
	}
	opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionBalanced })
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open raw pebble %s: %w", dir, err)
	}
	return &Raw{db: db}, nil
}

// DB returns the underlying Pebble database.
func (r *Raw) DB() *pebble.DB { return r.db }

// Put commits the batch with pebble.Sync. It is safe for concurrent use.
func (r *Raw) Put(_ context.Context, batch []Cell) error {
	b := r.db.NewBatch()
	var key [RowKeySize + QualifierSize]byte
	for i := range batch {
		if err := b.Set(batch[i].RawKey(key[:0]), batch[i].Value[:], nil); err != nil {
			b.Close()
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

// Get reads the row with a bounded iterator.
func (r *Raw) Get(_ context.Context, row []byte) (int, error) {
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: row, UpperBound: rowEnd(row)})
	if err != nil {
		return 0, err
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		_ = it.Value()
		n++
	}
	return n, errors.Join(it.Error(), it.Close())
}

// Scan is Get: for raw Pebble a one-row read is a bounded iteration either way.
func (r *Raw) Scan(ctx context.Context, row []byte) (int, error) { return r.Get(ctx, row) }

// GetReuse is Get: raw Pebble's iteration copies nothing to reuse.
func (r *Raw) GetReuse(ctx context.Context, row []byte) (int, error) { return r.Get(ctx, row) }

// Close closes Pebble.
func (r *Raw) Close() error { return r.db.Close() }

// rowEnd returns the exclusive upper bound of a row's raw keys.
func rowEnd(row []byte) []byte {
	return append(bytes.Clone(row), 0xff, 0xff, 0xff)
}

// Table is tsd's storage contract: any storage.DB holding the bench table.
type Table struct {
	db  storage.DB
	tbl storage.Table
	// GetReuse's buffers.
	dst []storage.Cell
	buf []byte
}

// NewTable creates the bench table in db and takes ownership of db.
func NewTable(ctx context.Context, db storage.DB) (*Table, error) {
	if err := db.EnsureTable(ctx, Spec); err != nil {
		return nil, fmt.Errorf("create bench table: %w", err)
	}
	tbl, err := db.Table(ctx, TableName)
	if err != nil {
		return nil, err
	}
	return &Table{db: db, tbl: tbl}, nil
}

// DB returns the underlying store.
func (t *Table) DB() storage.DB { return t.db }

// Put applies the batch as one Apply of single-cell rows.
func (t *Table) Put(ctx context.Context, batch []Cell) error {
	muts := make([]storage.Mutation, len(batch))
	cells := make([]storage.Cell, len(batch))
	for i := range batch {
		c := &batch[i]
		cells[i] = storage.Cell{Family: FamilyName, Qualifier: c.Qualifier[:], Timestamp: 1000, Value: c.Value[:]}
		muts[i] = storage.Mutation{Row: c.Row[:], Cells: cells[i : i+1 : i+1]}
	}
	return t.tbl.Apply(ctx, muts)
}

// Get reads the row with Table.Get.
func (t *Table) Get(ctx context.Context, row []byte) (int, error) {
	cs, err := t.tbl.Get(ctx, row, nil)
	return len(cs), err
}

// GetReuse reads the row with Table.GetAppend into buffers kept from call
// to call.
func (t *Table) GetReuse(ctx context.Context, row []byte) (int, error) {
	var err error
	t.dst, t.buf, err = t.tbl.GetAppend(ctx, t.dst[:0], t.buf[:0], row, nil)
	if err != nil {
		return 0, err
	}
	return len(t.dst), nil
}

// Scan reads the row with a [row, row+0x00) scan.
func (t *Table) Scan(ctx context.Context, row []byte) (int, error) {
	stop := append(bytes.Clone(row), 0)
	sc := t.tbl.Scan(ctx, &storage.ScanOptions{Start: row, Stop: stop})
	n := 0
	for sc.Next() {
		n += len(sc.Row().Cells)
	}
	return n, sc.Close()
}

// Close closes the store.
func (t *Table) Close() error { return t.db.Close() }
