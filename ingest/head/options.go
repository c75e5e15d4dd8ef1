package head

import (
	"fmt"
	"log/slog"
	"math/bits"
	"time"

	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/series"
)

// Default head option values.
const (
	DefaultShards  = 256
	DefaultMaxTags = 32
	// DefaultMaxMemory is tsd.storage.head.max_memory's default, 2 GiB.
	DefaultMaxMemory = 2 << 30
)

// SeriesRegistrar records a series in the series index before the head
// lets it hold a point (uid/index implements it). The head calls it for
// each new series when a commit first holds one of its points (Commit
// registers the commit's new series before it writes the log), and when it
// rebuilds a series from the log at start, so it must be idempotent; it
// may be called concurrently and for the same key twice. key is valid only
// during the call.
type SeriesRegistrar interface {
	RegisterSeries(key []byte) error
}

// SeriesBatchRegistrar is implemented by a registrar that registers many
// series for much less than one RegisterSeries each (uid/index's Index,
// which claims their rows concurrently and logs them in one record). The
// head then calls RegisterSeriesBatch once per commit with the commit's
// new series, and once per log series record at start, instead of
// RegisterSeries per series; every key must be registered when it returns
// nil. The same rules hold: idempotent, concurrent calls, keys valid only
// during the call.
type SeriesBatchRegistrar interface {
	RegisterSeriesBatch(keys [][]byte) error
}

// SeriesToucher is implemented by a registrar that also keeps the hours
// each series holds data in (uid/index's Index.Touch). The head calls
// Touch once per series and hour, when it opens a row (also when it
// rebuilds rows from the log), with the row's first millisecond; key is
// valid only during the call, which must not block.
type SeriesToucher interface {
	Touch(key []byte, ms int64) bool
}

// HeadOptions configure a Head. The zero value is usable after
// EnsureDefaults.
type HeadOptions struct {
	// Widths are the UID widths of series keys. Default 3, 3, 3.
	Widths series.Widths
	// MaxTags bounds the tags of a series key. Default 32.
	MaxTags int
	// Shards is the number of series-map shards, a power of two. Default 256.
	Shards int
	// Registrar is told about every new series (in one call per commit if
	// it is also a SeriesBatchRegistrar), and about every hour a series
	// opens a row in if it is also a SeriesToucher. Default none.
	Registrar SeriesRegistrar
	// WAL configures the write-ahead log; its Logger defaults to Logger.
	WAL wal.Options
	// Logger receives warnings (damaged log, undecodable records).
	// Default slog.Default().
	Logger *slog.Logger
	// MaxMemory bounds the head's memory (MemoryBytes,
	// tsd.storage.head.max_memory). Above it a running flusher loop writes
	// the oldest open rows early, as partial columns that the compactor
	// merges later; Commit refuses points with a *ThrottleError
	// (ErrThrottled) only when that cannot keep up: the latest flush
	// failed, no flusher loop runs, or memory passed MaxMemory by a
	// quarter. Default 2 GiB; negative is unlimited.
	MaxMemory int64
	// Clock stamps each row with the arrival time of its latest point,
	// which the flush grace is measured from, and times the series
	// limits' windows. Default time.Now.
	Clock func() time.Time
	// SeriesLimits bound the series clients may write by name
	// (tsd.core.max_hourly_series, max_daily_series,
	// max_series_per_metric). Default: every limit off.
	SeriesLimits SeriesLimits
	// Changes is marked with the time span of every commit once its
	// points are visible, and of every DeleteRange once they are gone,
	// for the caches of query answers that read it (internal/changes).
	// Default nil: nothing is marked.
	Changes *changes.Tracker
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *HeadOptions) EnsureDefaults() *HeadOptions {
	if o.Widths == (series.Widths{}) {
		o.Widths = series.DefaultWidths()
	}
	if o.MaxTags == 0 {
		o.MaxTags = DefaultMaxTags
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.WAL.Logger == nil {
		o.WAL.Logger = o.Logger
	}
	o.WAL.EnsureDefaults()
	return o
}

// Validate reports an option out of range.
func (o *HeadOptions) Validate() error {
	switch {
	case !o.Widths.Valid():
		return fmt.Errorf("ingest: UID widths %+v out of 1..8", o.Widths)
	case o.MaxTags < 0:
		return fmt.Errorf("ingest: max tags %d is negative", o.MaxTags)
	case o.Shards <= 0 || bits.OnesCount(uint(o.Shards)) != 1:
		return fmt.Errorf("ingest: shards %d is not a power of two", o.Shards)
	}
	if err := o.SeriesLimits.validate(o.Registrar); err != nil {
		return err
	}
	return o.WAL.Validate()
}
