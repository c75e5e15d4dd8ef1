package promql

import (
	"errors"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// DefaultLabelCacheSize is the number of label sets a Queryable caches.
const DefaultLabelCacheSize = 1 << 18

// Options configure a Queryable. Zero fields take the documented defaults.
type Options struct {
	// Reader reads the points of the store and the head. Required.
	Reader *read.Reader
	// Index resolves label matchers to series. Required.
	Index *index.Index
	// UIDs names the UIDs of TSUIDs and resolves label names. Required.
	UIDs *uid.UIDs
	// Limits bound each query (one Querier); zero fields are unlimited.
	// Default unlimited.
	Limits read.Limits
	// LabelCacheSize is the number of series whose label sets are cached;
	// the cache is emptied whole when full. Default 262,144.
	LabelCacheSize int
	// DisablePushdown makes every Select return raw samples, even under a
	// context marked by WithPushdown. Default false: range functions are
	// pushed down where WithPushdown and the hints allow.
	DisablePushdown bool
	// DisableRollups makes pushed-down Selects read raw points even where
	// rollup cells could answer them (see the package doc, Rollups).
	// Default false: the Reader's rollup tables are used.
	DisableRollups bool
	// DelayedNameRemoval says the engine runs with the feature of that
	// name (EngineOptions.Features): the engine then keeps a range
	// function's metric name until the end of the query, which only it
	// can do, so WithPushdown leaves those calls to it (rewriteWindows).
	// Default false, as the engine's default.
	DelayedNameRemoval bool
}

// EnsureDefaults fills zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.LabelCacheSize == 0 {
		o.LabelCacheSize = DefaultLabelCacheSize
	}
	return o
}

// Validate reports the first missing or invalid field.
func (o *Options) Validate() error {
	switch {
	case o.Reader == nil:
		return errors.New("promql: Options.Reader is required")
	case o.Index == nil:
		return errors.New("promql: Options.Index is required")
	case o.UIDs == nil:
		return errors.New("promql: Options.UIDs is required")
	case o.LabelCacheSize < 0:
		return errors.New("promql: Options.LabelCacheSize must not be negative")
	case o.Limits.MaxSeries < 0 || o.Limits.MaxPoints < 0 || o.Limits.MaxBytes < 0:
		return errors.New("promql: Options.Limits must not be negative")
	}
	return nil
}
