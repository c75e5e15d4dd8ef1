package series

// RowRef names one hour row of a series held in memory (ingest's head)
// and the state of its points: FP is a 64-bit fingerprint of the row's
// contents that changes whenever a point of the row is added, replaced
// or deleted (equal fingerprints mean equal points), so a
// reader may key a decoded copy of the row by it (query/read's row
// cache), as it keys stored rows by a hash of their cells.
type RowRef struct {
	// Base is the row's first millisecond (a whole hour).
	Base int64
	// FP fingerprints the row's points.
	FP uint64
	// Points bounds the points the row holds (writes of one timestamp
	// not yet merged count once each), to size a buffer for them.
	Points int
}
