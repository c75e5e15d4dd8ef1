package storage

// ReadOptions filter the cells of a row. The zero value reads every version
// the family keeps.
type ReadOptions struct {
	// Families limits the read to these families; nil reads all.
	Families []string
	// Qualifiers limits the read to these exact qualifiers; nil reads all.
	Qualifiers [][]byte
	// QualifierPrefix keeps qualifiers that start with it; nil keeps all.
	QualifierPrefix []byte
	// QualifierStart and QualifierStop keep qualifiers in
	// [QualifierStart, QualifierStop); nil bounds are open.
	QualifierStart, QualifierStop []byte
	// MinTime and MaxTime keep cells with timestamps in [MinTime, MaxTime)
	// microseconds; a zero MaxTime is unbounded.
	MinTime, MaxTime int64
	// MaxVersions keeps at most this many newest versions of each column
	// (after the family's own limit); 0 keeps what the family keeps.
	MaxVersions int
}

// ScanOptions select rows and cells for Table.Scan.
type ScanOptions struct {
	// Start is the first row key (inclusive); nil starts at the beginning.
	Start []byte
	// Stop is the row key the scan ends before; nil runs to the end.
	Stop []byte
	// RowRegex keeps rows whose whole key matches this RE2 expression over
	// raw bytes; "" keeps all.
	RowRegex string
	// Limit stops after this many rows; 0 is unlimited.
	Limit int
	// Reverse returns rows in descending key order; cells within a row keep
	// storage order.
	Reverse bool
	// MaxBatchBytes bounds what one Row of the scan holds: a row whose
	// cells take more arrives as several Rows with its key, each but the
	// last marked Partial. A Row is filled in storage order and ends
	// before the first cell that would take it over the bound (counting
	// CellBytes per cell), so a cell larger than the bound is a Row of its
	// own. 0 means DefaultMaxBatchBytes.
	MaxBatchBytes int
	// ReadOptions filter the cells of each row. A row with no matching cell
	// is skipped.
	ReadOptions
}

// DefaultMaxBatchBytes is the default ScanOptions.MaxBatchBytes, 64 MiB:
// an OpenTSDB row of millisecond points holds up to 3.6 million cells,
// which a scan must not have to hold at once.
const DefaultMaxBatchBytes = 64 << 20

// CellOverhead is what a cell counts towards MaxBatchBytes beyond its
// qualifier and value bytes: the size of a Cell on 64-bit platforms, so
// that the bound holds for rows of many small cells too.
const CellOverhead = 96

// CellBytes is what c counts towards a scan's MaxBatchBytes.
func CellBytes(c *Cell) int { return len(c.Qualifier) + len(c.Value) + CellOverhead }

// BatchLimit returns MaxBatchBytes, or DefaultMaxBatchBytes when it is 0.
func (o *ScanOptions) BatchLimit() int {
	if o.MaxBatchBytes == 0 {
		return DefaultMaxBatchBytes
	}
	return o.MaxBatchBytes
}

// DeleteKind says what a Deletion removes.
type DeleteKind uint8

const (
	// DeleteRow removes every cell of the row.
	DeleteRow DeleteKind = iota
	// DeleteFamily removes every cell of one family.
	DeleteFamily
	// DeleteColumn removes versions of one column, optionally in a time range.
	DeleteColumn
)

// Deletion names cells of one row to remove.
type Deletion struct {
	// Kind selects row, family or column.
	Kind DeleteKind
	// Family is required for DeleteFamily and DeleteColumn.
	Family string
	// Qualifier is the column for DeleteColumn.
	Qualifier []byte
	// MinTime and MaxTime limit the deletion to timestamps in
	// [MinTime, MaxTime) microseconds; both zero means all versions.
	// Only DeleteColumn and DeleteFamily honour a range.
	MinTime, MaxTime int64
}
