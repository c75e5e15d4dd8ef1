package read

import (
	"errors"
	"log/slog"
	"runtime"
	"time"

	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// Head is the write path's unflushed points (ingest/head's Head implements it).
type Head interface {
	// AppendRows appends a reference to each hour row of the series key
	// (a TSUID) that may hold points with mint <= T < maxt, in time order:
	// its base and a fingerprint that changes whenever a point of the row
	// is added or replaced.
	AppendRows(dst []series.RowRef, key []byte, mint, maxt int64) []series.RowRef
	// AppendRowPoints appends every point of the row of key at base, in
	// time order, one per timestamp, and returns the row's fingerprint
	// taken with them; ok is false when the head no longer holds the row.
	AppendRowPoints(dst []series.Point, key []byte, base int64) (pts []series.Point, fp uint64, ok bool)
	// AppendRowChunk appends an encoded snapshot of the row of key at
	// base to dst, a few bytes a point, and returns the row's fingerprint
	// and point count taken with it; ok as AppendRowPoints'.
	AppendRowChunk(dst []byte, key []byte, base int64) (snap []byte, fp uint64, n int, ok bool)
	// DecodeRowChunk appends the points of a snapshot AppendRowChunk
	// made, as AppendRowPoints gives them; ok is false for bytes that are
	// not one.
	DecodeRowChunk(dst []series.Point, snap []byte) (pts []series.Point, ok bool)
}

// DefaultFamily is the data family, OpenTSDB's "t".
const DefaultFamily = "t"

// Options configure a Reader. Zero fields take the documented defaults.
type Options struct {
	// Data is the data table. Required.
	Data storage.Table
	// Family is the data column family. Default "t".
	Family string
	// Layout is the data table's key layout (recorded with the table).
	// Required: its Salt decides the buckets.
	Layout rowkey.Layout
	// Head supplies unflushed points. Default nil: the store only.
	Head Head
	// UIDs names metrics for retention. Required when Retention is set.
	UIDs *uid.UIDs
	// Retention hides points older than their metric's cutoff. Default
	// nil: everything stored is returned.
	Retention *retention.Rules
	// Now is the clock retention cutoffs are computed at. Default
	// time.Now.
	Now func() time.Time
	// Parallelism bounds the goroutines of one read (salt buckets scanned
	// at once, or series read at once). Default 2 × GOMAXPROCS, at least 4.
	Parallelism int
	// Plan forces a plan for selections that leave theirs to the planner
	// (tsd.query.plan; benchmarks and diagnosis). Default PlanAuto.
	Plan Plan
	// Logger receives corrupt-cell reports. Default slog.Default().
	Logger *slog.Logger
	// MaxFetchBytes bounds the encoded cells one Fetch keeps when it picks
	// the scan plan; a selection whose rows need more falls back to Gets.
	// -1 makes Fetch always Get. Default 64 MiB.
	MaxFetchBytes int64
	// RowCacheBytes bounds the decoded-row cache: rows read keep their
	// decoded points (24 bytes each) so later reads skip the decode; once
	// it is full, only rows read twice enter.
	// -1 disables it. Default 256 MiB.
	RowCacheBytes int64
	// RowCacheReserve is the memory kept resident for the row cache's
	// new entries, filled in the background from the first read that
	// needs it or from Reader.FillReserve, at full speed only while no
	// read runs (reserve.go): a row that finds it empty is read as if
	// uncached, and a later read admits it. At most RowCacheBytes. -1:
	// entries come from the heap as rows are read. Default 16 MiB.
	RowCacheReserve int64
	// Rollups are the rollup tables VisitCells reads. Default nil: none.
	Rollups *Rollups
	// Changes, when every write to the data table marks it with the
	// hours of the rows it wrote once they are stored, lets a row read
	// before be answered from the row cache without a Get while its hour
	// was not written since (trust.go). A daemon that shares its store
	// with another writer must leave it nil. Default nil: every row is
	// read.
	Changes *changes.Tracker
}

// DefaultRowCacheBytes is Options.RowCacheBytes' default.
const DefaultRowCacheBytes = 256 << 20

// DefaultRowCacheReserve is Options.RowCacheReserve's default.
const DefaultRowCacheReserve = 16 << 20

// DefaultMaxFetchBytes is Options.MaxFetchBytes' default.
const DefaultMaxFetchBytes = 64 << 20

// EnsureDefaults fills zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Family == "" {
		o.Family = DefaultFamily
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Parallelism == 0 {
		o.Parallelism = max(4, 2*runtime.GOMAXPROCS(0))
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxFetchBytes == 0 {
		o.MaxFetchBytes = DefaultMaxFetchBytes
	}
	if o.RowCacheBytes == 0 {
		o.RowCacheBytes = DefaultRowCacheBytes
	}
	if o.RowCacheReserve == 0 {
		o.RowCacheReserve = DefaultRowCacheReserve
	}
	o.Layout.EnsureDefaults()
	return o
}

// Validate reports the first missing or invalid field.
func (o *Options) Validate() error {
	switch {
	case o.Data == nil:
		return errors.New("read: Options.Data is required")
	case o.Retention != nil && o.UIDs == nil:
		return errors.New("read: Options.UIDs is required with Retention")
	case o.Parallelism < 1:
		return errors.New("read: Options.Parallelism must be positive")
	case o.MaxFetchBytes < -1:
		return errors.New("read: Options.MaxFetchBytes must be -1 or more")
	case o.RowCacheBytes < -1:
		return errors.New("read: Options.RowCacheBytes must be -1 or more")
	case o.RowCacheReserve < -1:
		return errors.New("read: Options.RowCacheReserve must be -1 or more")
	case o.Rollups != nil && (o.Rollups.Config == nil || len(o.Rollups.Tables) != len(o.Rollups.Config.Intervals)):
		return errors.New("read: Options.Rollups needs a Config and one table per interval")
	}
	return o.Layout.Validate()
}
