package uid

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// DefaultTable is the UID table's default name (tsd.storage.hbase.uid_table).
const DefaultTable = schema.DefaultUIDTable

// Defaults of Options.
const (
	DefaultCacheSize    = 1 << 20
	DefaultMaxAttempts  = 3
	DefaultRetryBackoff = 20 * time.Millisecond
)

// Options configure a UIDs. The zero value is valid after EnsureDefaults.
type Options struct {
	// Table is the UID table's name (tsd.storage.hbase.uid_table).
	// Default DefaultTable, "tsdb-uid".
	Table string
	// Widths are the UID widths per kind in bytes, 1..8
	// (tsd.storage.uid.width.metric, .tagk, .tagv). A zero field takes
	// the default, 3.
	Widths series.Widths
	// Format is the store's format, which decides how names are stored:
	// schema.FormatOpenTSDB as Latin-1, schema.FormatDense as UTF-8.
	// Default schema.FormatDense.
	Format schema.Format
	// NoAutoCreateMetrics refuses unknown metrics in Resolve
	// (tsd.core.auto_create_metrics=false). Default false: tsd creates
	// metrics, unlike OpenTSDB.
	NoAutoCreateMetrics bool
	// NoAutoCreateTagKs refuses unknown tag keys in Resolve
	// (tsd.core.auto_create_tagks=false). Default false.
	NoAutoCreateTagKs bool
	// NoAutoCreateTagVs refuses unknown tag values in Resolve
	// (tsd.core.auto_create_tagvs=false). Default false.
	NoAutoCreateTagVs bool
	// CreatedFromName reports a UIDMeta's created time, when none is
	// stored, as the write time of the UID's reverse map: when the UID was
	// assigned, or last renamed (tsd.core.meta.enable_realtime_uid).
	// Default false: created stays 0 until stored, as in OpenTSDB.
	CreatedFromName bool
	// NameCacheSize bounds the name→UID cache of each kind, in entries.
	// Default DefaultCacheSize (1,048,576).
	NameCacheSize int
	// IDCacheSize bounds the UID→name cache of each kind, in entries.
	// Default DefaultCacheSize (1,048,576).
	IDCacheSize int
	// MaxAttempts is how many times one assignment or storage read is
	// tried before its error is returned. Default 3, OpenTSDB's
	// MAX_ATTEMPTS_ASSIGN_ID.
	MaxAttempts int
	// RetryBackoff is the pause after the first retryable storage error;
	// it doubles with each retry. Default 20ms.
	RetryBackoff time.Duration
	// StoreTimeout bounds one Resolve that misses the cache and goes to the
	// UID table (its lookup and, for a new name, the assignment), unless
	// ctx ends sooner. Past it Resolve fails with a retryable error, so a
	// writer answers "retry later" while the store is unreachable instead
	// of holding its client for the store's own retries (minutes).
	// Default DefaultStoreTimeout (10s); negative is no bound.
	StoreTimeout time.Duration
	// Logger receives assignment races and repairs. Default slog.Default().
	Logger *slog.Logger
}

// DefaultStoreTimeout is Options.StoreTimeout's default.
const DefaultStoreTimeout = 10 * time.Second

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Table == "" {
		o.Table = DefaultTable
	}
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&o.Widths.Metric, series.DefaultUIDWidth)
	def(&o.Widths.TagK, series.DefaultUIDWidth)
	def(&o.Widths.TagV, series.DefaultUIDWidth)
	def(&o.NameCacheSize, DefaultCacheSize)
	def(&o.IDCacheSize, DefaultCacheSize)
	def(&o.MaxAttempts, DefaultMaxAttempts)
	if o.RetryBackoff == 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.StoreTimeout == 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports the first bad field.
func (o *Options) Validate() error {
	switch {
	case !o.Widths.Valid():
		return fmt.Errorf("uid widths %+v: each must be 1..8 bytes", o.Widths)
	case !o.Format.Valid():
		return fmt.Errorf("unknown format %d", o.Format)
	case o.NameCacheSize < 1 || o.IDCacheSize < 1:
		return fmt.Errorf("uid cache sizes %d/%d: must be at least 1", o.NameCacheSize, o.IDCacheSize)
	case o.MaxAttempts < 1:
		return fmt.Errorf("uid MaxAttempts %d: must be at least 1", o.MaxAttempts)
	case o.RetryBackoff < 0:
		return fmt.Errorf("uid RetryBackoff %v: negative", o.RetryBackoff)
	}
	return nil
}

func (o *Options) width(k Kind) int {
	switch k {
	case Metric:
		return o.Widths.Metric
	case TagK:
		return o.Widths.TagK
	}
	return o.Widths.TagV
}

func (o *Options) autoCreate(k Kind) bool {
	switch k {
	case Metric:
		return !o.NoAutoCreateMetrics
	case TagK:
		return !o.NoAutoCreateTagKs
	}
	return !o.NoAutoCreateTagVs
}
