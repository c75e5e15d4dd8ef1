package series

// DefaultUIDWidth is OpenTSDB's UID width in bytes for every kind.
const DefaultUIDWidth = 3

// Widths are the UID widths in bytes of metrics, tag keys and tag values
// (1..8 each; OpenTSDB's default is 3). They never change once data exists.
type Widths struct {
	Metric, TagK, TagV int
}

// DefaultWidths returns 3 bytes for every kind.
func DefaultWidths() Widths {
	return Widths{Metric: DefaultUIDWidth, TagK: DefaultUIDWidth, TagV: DefaultUIDWidth}
}

// Valid reports whether every width is in 1..8.
func (w Widths) Valid() bool {
	ok := func(n int) bool { return n >= 1 && n <= 8 }
	return ok(w.Metric) && ok(w.TagK) && ok(w.TagV)
}
