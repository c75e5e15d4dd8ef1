package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/tsd-db/tsd/internal/cell"
)

// MaxRowKeySize is the largest row key any engine accepts (Bigtable's limit).
const MaxRowKeySize = 4096

// Cell is one version of one column:
//
//   - Row is the row key. Put and Apply ignore it: the row argument wins.
//     In a scanned Row it is the Row's Key.
//   - Family is the column family name.
//   - Qualifier is the column qualifier; it may be empty.
//   - Timestamp is microseconds since the epoch, a multiple of 1000; zero
//     in a write means the engine's clock.
//   - Value is the cell value; it may be empty.
//
// The type is defined in internal/cell and aliased here and in rowkey, so a
// scanned row's cells go to the data table's decoders as they are.
type Cell = cell.Cell

// Row is what a Scanner yields: a row key and the row's cells that pass the
// scan's filters, in storage order. A row whose cells take more than the
// scan's MaxBatchBytes arrives as several Rows with the same Key, each but
// the last marked Partial; a reader that needs the whole row gathers them.
type Row struct {
	// Key is the row key. Every cell's Row is this slice.
	Key []byte
	// Cells holds at least one cell.
	Cells []Cell
	// Partial says the next Row continues this row: it was cut at the
	// scan's MaxBatchBytes.
	Partial bool
}

// FamilySpec describes one column family.
type FamilySpec struct {
	// Name is the family name, [_a-zA-Z0-9][-_.a-zA-Z0-9]*.
	Name string
	// MaxVersions is how many versions of a column are kept; 0 keeps all.
	MaxVersions int
	// TTL is how long a cell lives after its timestamp; 0 keeps it forever.
	TTL time.Duration
}

// TableSpec describes a table and its families.
type TableSpec struct {
	// Name is the table name, [_a-zA-Z0-9][-_.a-zA-Z0-9]*.
	Name string
	// Families lists the column families; at least one.
	Families []FamilySpec
}

// Family returns the spec of the named family and whether it exists.
func (s TableSpec) Family(name string) (FamilySpec, bool) {
	for _, f := range s.Families {
		if f.Name == name {
			return f, true
		}
	}
	return FamilySpec{}, false
}

// DB is an open store holding tables.
type DB interface {
	// EnsureTable creates the table if it is missing, adds missing
	// families, and updates the MaxVersions and TTL of existing ones.
	EnsureTable(ctx context.Context, spec TableSpec) error
	// Table returns a handle on an existing table, or ErrNotFound naming it.
	Table(ctx context.Context, name string) (Table, error)
	// Tables lists the tables and their families in name order.
	Tables(ctx context.Context) ([]TableSpec, error)
	// DropTable deletes a table and all its data.
	DropTable(ctx context.Context, name string) error
	// Close releases the store; later calls return ErrClosed.
	Close() error
}

// EnsureTables ensures each spec's table (DB.EnsureTable) and opens it,
// returning the handles in the order of specs: what every opener of a store
// does with its tables. An error names the table.
func EnsureTables(ctx context.Context, db DB, specs ...TableSpec) ([]Table, error) {
	tables := make([]Table, len(specs))
	for i, spec := range specs {
		if err := db.EnsureTable(ctx, spec); err != nil {
			return nil, fmt.Errorf("ensure table %s: %w", spec.Name, err)
		}
		t, err := db.Table(ctx, spec.Name)
		if err != nil {
			return nil, fmt.Errorf("open table %s: %w", spec.Name, err)
		}
		tables[i] = t
	}
	return tables, nil
}

// Table reads and writes the cells of one table. It is safe for concurrent use.
type Table interface {
	// Spec returns the table's name and families.
	Spec() TableSpec

	// Get reads one row. It returns ErrNotFound when no cell matches.
	// opts may be nil. The returned cells are owned by the caller.
	Get(ctx context.Context, row []byte, opts *ReadOptions) ([]Cell, error)
	// GetAppend is Get into caller-owned memory: it appends the row's cells
	// to dst and their bytes (row key, qualifiers, values) to buf and
	// returns both grown slices, so a caller reading many rows reuses them
	// (dst[:0], buf[:0]) and allocates nothing in the steady state. The
	// appended cells point into the returned buf; cells appended by earlier
	// calls stay valid until the caller reuses their memory. It validates
	// and fails as Get does; on any error, ErrNotFound included, dst and buf
	// come back with their lengths unchanged.
	GetAppend(ctx context.Context, dst []Cell, buf []byte, row []byte, opts *ReadOptions) ([]Cell, []byte, error)
	// Scan streams the rows in [opts.Start, opts.Stop) that pass the
	// filters, each with its cells that pass them. The Scanner must be
	// closed.
	Scan(ctx context.Context, opts *ScanOptions) Scanner

	// Put writes cells to one row atomically.
	Put(ctx context.Context, row []byte, cells []Cell) error
	// Apply writes many rows; each row is atomic, the batch is not.
	Apply(ctx context.Context, muts []Mutation) error
	// Delete removes cells of one row atomically; no deletions means the
	// whole row.
	Delete(ctx context.Context, row []byte, dels ...Deletion) error
	// DeleteRange removes every row in [start, stop); a nil stop means the
	// end of the table.
	DeleteRange(ctx context.Context, start, stop []byte) error

	// Increment atomically adds delta to an 8-byte big-endian signed
	// counter (absent counts as 0) and returns the new value. A cell that
	// is not 8 bytes is ErrInvalidArgument.
	Increment(ctx context.Context, row []byte, family string, qualifier []byte, delta int64) (int64, error)
	// CheckAndPut writes cells to row atomically if the newest version of
	// (family, qualifier) equals expected; a nil expected means the column
	// must be absent (a non-nil empty slice means present and empty). A
	// mismatch is ErrConflict.
	CheckAndPut(ctx context.Context, row []byte, family string, qualifier []byte, expected []byte, cells []Cell) error
	// Append atomically appends value to the newest version of the column
	// (absent counts as empty) and returns the new value.
	Append(ctx context.Context, row []byte, family string, qualifier []byte, value []byte) ([]byte, error)
}

// Scanner iterates over the rows of a scan in scan order, a row at a time
// (or a batch at a time, for a row larger than ScanOptions.MaxBatchBytes).
// Errors are sticky: after Next returns false, Err tells whether the scan
// ended or failed; a scan that fails inside a row yields none of that row
// beyond the Partial batches already returned. A Scanner is not safe for
// concurrent use.
type Scanner interface {
	// Next advances to the next row, or to the next batch of a row cut by
	// MaxBatchBytes, and reports whether there is one.
	Next() bool
	// Row returns the current row. Its key, cells and the bytes they point
	// to stay valid only until the next call to Next or Close.
	Row() Row
	// Err returns the error that ended the scan, if any.
	Err() error
	// Close releases the scanner; it returns Err.
	Close() error
}

// Mutation is the writes to one row inside Apply: deletions first, then puts.
type Mutation struct {
	// Row is the row key.
	Row []byte
	// Deletes are applied before Cells.
	Deletes []Deletion
	// Cells are written after Deletes; their Row fields are ignored.
	Cells []Cell
}
