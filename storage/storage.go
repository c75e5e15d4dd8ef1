package storage

import (
	"context"
	"time"
)

// MaxRowKeySize is the largest row key any engine accepts (Bigtable's limit).
const MaxRowKeySize = 4096

// Cell is one version of one column.
type Cell struct {
	// Row is the row key. Put and Apply ignore it: the row argument wins.
	Row []byte
	// Family is the column family name.
	Family string
	// Qualifier is the column qualifier; it may be empty.
	Qualifier []byte
	// Timestamp is microseconds since the epoch, a multiple of 1000; zero
	// in a write means the engine's clock.
	Timestamp int64
	// Value is the cell value; it may be empty.
	Value []byte
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
	// Scan streams the cells of the rows in [opts.Start, opts.Stop) that
	// pass the filters. The Scanner must be closed.
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

// Scanner iterates over cells in storage order. Errors are sticky: after Next
// returns false, Err tells whether the scan ended or failed. A Scanner is not
// safe for concurrent use.
type Scanner interface {
	// Next advances to the next cell and reports whether there is one.
	Next() bool
	// Cell returns the current cell. Its slices stay valid only until the
	// next call to Next or Close.
	Cell() Cell
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
