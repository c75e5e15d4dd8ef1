package cell

// Cell is one version of one column. storage.Cell documents its fields'
// meaning in the store.
type Cell struct {
	// Row is the row key.
	Row []byte
	// Family is the column family name.
	Family string
	// Qualifier is the column qualifier; it may be empty.
	Qualifier []byte
	// Timestamp is microseconds since the epoch, a multiple of 1000.
	Timestamp int64
	// Value is the cell value; it may be empty.
	Value []byte
}
