package rowkey

import (
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
)

// DefaultMaxTags is tsd's tag limit per series (tsd.storage.max_tags;
// OpenTSDB's own default is 8).
const DefaultMaxTags = 32

// maxMaxTags bounds MaxTags so that keys stay far below storage limits.
const maxMaxTags = 1024

// Layout is a data table's key shape. It never changes once the table
// holds data: it is recorded with the table.
type Layout struct {
	// Widths are the UID widths. Default 3 bytes each.
	Widths series.Widths
	// Salt is the salt setting. The zero value is OpenTSDB's width 0 (no
	// salt); new tsd tables use salt.Default() (width 1, 20 buckets), which
	// DefaultLayout sets. EnsureDefaults leaves it alone because width 0 is
	// a legitimate recorded setting.
	Salt salt.Salt
	// MaxTags is the most tags a new series may have. Default 32.
	MaxTags int
}

// DefaultLayout returns the layout of a new tsd table: 3-byte UIDs, salt
// width 1 with 20 buckets, 32 tags.
func DefaultLayout() Layout {
	return Layout{Widths: series.DefaultWidths(), Salt: salt.Default(), MaxTags: DefaultMaxTags}
}

// EnsureDefaults fills zero fields with their defaults.
func (l *Layout) EnsureDefaults() {
	if l.Widths == (series.Widths{}) {
		l.Widths = series.DefaultWidths()
	}
	if l.MaxTags == 0 {
		l.MaxTags = DefaultMaxTags
	}
}

// Validate reports the first field out of range.
func (l *Layout) Validate() error {
	if !l.Widths.Valid() {
		return invalidf("uid widths %+v not in 1..8", l.Widths)
	}
	if l.MaxTags < 1 || l.MaxTags > maxMaxTags {
		return invalidf("max tags %d not in 1..%d", l.MaxTags, maxMaxTags)
	}
	return nil
}

// pairWidth is the width of one tagk/tagv pair.
func (l *Layout) pairWidth() int { return l.Widths.TagK + l.Widths.TagV }

// prefixLen is the width of salt, metric and base time.
func (l *Layout) prefixLen() int { return l.Salt.Width() + l.Widths.Metric + TimestampBytes }
