package schema

import "fmt"

// Format is a store's write format (tsd.storage.format). It decides the
// layout of data rows (package rowkey, written by the flush) and how the
// UID table stores names (package uid).
type Format uint8

const (
	// FormatDense is tsd's own format, the default for new stores: one
	// dense column per data row, names stored as UTF-8.
	FormatDense Format = iota
	// FormatOpenTSDB is OpenTSDB 2.4's format, for stores shared with
	// OpenTSDB daemons: OpenTSDB's columns, names stored as Latin-1
	// (ISO-8859-1).
	FormatOpenTSDB
)

// String returns the configuration and record value: "dense" or
// "opentsdb".
func (f Format) String() string {
	switch f {
	case FormatDense:
		return "dense"
	case FormatOpenTSDB:
		return "opentsdb"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// Valid reports whether f is a known format.
func (f Format) Valid() bool { return f == FormatDense || f == FormatOpenTSDB }

// ParseFormat parses a tsd.storage.format value.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "dense":
		return FormatDense, nil
	case "opentsdb":
		return FormatOpenTSDB, nil
	}
	return 0, fmt.Errorf("tsd.storage.format %q: want dense or opentsdb", s)
}
