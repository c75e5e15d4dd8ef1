package tsquery

import (
	"math"
	"strings"
	"time"

	"github.com/tsd-db/tsd/query/agg"
)

// TSQuery is an /api/query request (OpenTSDB's TSQuery). The JSON tags are
// the POST body's field names.
type TSQuery struct {
	// Start is the start time as given (required), see ParseTime.
	Start string `json:"start"`
	// End is the end time as given; empty means now.
	End string `json:"end,omitempty"`
	// Timezone names the zone of absolute dates and calendar downsampling.
	Timezone string `json:"timezone,omitempty"`
	// Options are serializer options.
	Options map[string][]string `json:"options,omitempty"`
	// Padding asks for data on either side of the range (accepted, no effect).
	Padding bool `json:"padding"`
	// NoAnnotations suppresses annotations in the output.
	NoAnnotations bool `json:"noAnnotations"`
	// GlobalAnnotations adds the global annotations of the range.
	GlobalAnnotations bool `json:"globalAnnotations"`
	// ShowTSUIDs lists each group's TSUIDs.
	ShowTSUIDs bool `json:"showTSUIDs"`
	// MsResolution writes millisecond timestamps ("ms" is accepted too).
	MsResolution bool `json:"msResolution"`
	// ShowQuery echoes each sub-query with its results.
	ShowQuery bool `json:"showQuery"`
	// ShowStats adds per-query statistics.
	ShowStats bool `json:"showStats"`
	// ShowSummary appends a statistics summary.
	ShowSummary bool `json:"showSummary"`
	// Delete deletes the data read (needs tsd.http.query.allow_delete).
	Delete bool `json:"delete"`
	// UseCalendar aligns every downsampler to calendar boundaries.
	UseCalendar bool `json:"useCalendar"`
	// Queries are the sub-queries, at least one.
	Queries []*SubQuery `json:"queries"`

	// StartTime and EndTime are the parsed range in ms, set by Validate.
	StartTime int64 `json:"-"`
	EndTime   int64 `json:"-"`
}

// SubQuery is one metric (or TSUID list) of a query (OpenTSDB's
// TSSubQuery). Build one with NewSubQuery to get the defaults.
type SubQuery struct {
	// Aggregator names the group-by aggregator (required).
	Aggregator string `json:"aggregator"`
	// Metric is the metric name; required unless TSUIDs are given.
	Metric string `json:"metric,omitempty"`
	// TSUIDs are hex series ids of one metric; they take precedence.
	TSUIDs []string `json:"tsuids,omitempty"`
	// Downsample is the downsampling specifier as given, e.g. "1h-avg".
	Downsample string `json:"downsample,omitempty"`
	// Rate converts each series to a per-second rate.
	Rate bool `json:"rate"`
	// RateOptions are the rate's counter options; nil means the defaults.
	RateOptions *RateOptions `json:"rateOptions,omitempty"`
	// Filters select and group series; tags given as a map become filters.
	Filters []Filter `json:"filters"`
	// ExplicitTags keeps only series whose tag keys are exactly the filters'.
	ExplicitTags bool `json:"explicitTags"`
	// Percentiles asks histogram data for these percentiles, sorted.
	Percentiles []float32 `json:"percentiles,omitempty"`
	// RollupUsage says how rollup tables may be used; empty is the default.
	RollupUsage RollupUsage `json:"rollupUsage,omitempty"`
	// PreAggregate reads the pre-aggregated table.
	PreAggregate bool `json:"preAggregate"`
	// ShowHistogramBuckets returns a histogram's buckets.
	ShowHistogramBuckets bool `json:"showHistogramBuckets"`
	// UseFuzzyFilter and UseMultiGets are scan hints; both default to true.
	UseFuzzyFilter bool `json:"useFuzzyFilter"`
	UseMultiGets   bool `json:"useMultiGets"`
	// Index is the sub-query's position, set by Validate and echoed by
	// showQuery.
	Index int `json:"index"`

	// Agg and DS are the parsed aggregator and downsampler (nil: none), set
	// by Validate.
	Agg *agg.Aggregator `json:"-"`
	DS  *agg.Downsample `json:"-"`
}

// NewSubQuery returns a sub-query with OpenTSDB's defaults.
func NewSubQuery() *SubQuery {
	return &SubQuery{UseFuzzyFilter: true, UseMultiGets: true}
}

// RateOptions are a rate's counter options as given.
type RateOptions struct {
	// Counter treats the series as a monotonic counter.
	Counter bool `json:"counter"`
	// CounterMax is where the counter wraps; math.MaxInt64 by default.
	CounterMax int64 `json:"counterMax"`
	// ResetValue, when above 0, zeroes wrapped rates above it.
	ResetValue int64 `json:"resetValue"`
	// DropResets drops the rate across a counter reset.
	DropResets bool `json:"dropResets"`
}

// DefaultRateOptions returns OpenTSDB's defaults (CounterMax math.MaxInt64).
func DefaultRateOptions() RateOptions { return RateOptions{CounterMax: math.MaxInt64} }

// AggRateOptions returns the rate options for query/agg, the defaults when
// none were given.
func (sq *SubQuery) AggRateOptions() agg.RateOptions {
	if sq.RateOptions == nil {
		return agg.DefaultRateOptions()
	}
	r := sq.RateOptions
	return agg.RateOptions{Counter: r.Counter, CounterMax: r.CounterMax, ResetValue: r.ResetValue, DropResets: r.DropResets}
}

// RollupUsage is how a query may use rollup tables.
type RollupUsage string

// Rollup usages (TsdbQuery.ROLLUP_USAGE).
const (
	RollupRaw         RollupUsage = "ROLLUP_RAW"
	RollupNoFallback  RollupUsage = "ROLLUP_NOFALLBACK"
	RollupFallback    RollupUsage = "ROLLUP_FALLBACK"
	RollupFallbackRaw RollupUsage = "ROLLUP_FALLBACK_RAW"
)

// ParseRollupUsage reads a usage name ignoring case and surrounding space;
// unknown names give ROLLUP_NOFALLBACK, as OpenTSDB does.
func ParseRollupUsage(s string) RollupUsage {
	switch u := RollupUsage(strings.ToUpper(strings.TrimSpace(s))); u {
	case RollupRaw, RollupNoFallback, RollupFallback, RollupFallbackRaw:
		return u
	}
	return RollupNoFallback
}

// GroupByTagks returns the tag keys the sub-query groups by, in filter
// order, without repeats.
func (sq *SubQuery) GroupByTagks() []string {
	var keys []string
	for _, f := range sq.Filters {
		if f.GroupBy && !contains(keys, f.Tagk) {
			keys = append(keys, f.Tagk)
		}
	}
	return keys
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// location returns the query's zone for calendar downsampling: UTC unless
// Timezone names one.
func (q *TSQuery) location() (*time.Location, error) {
	if q.Timezone == "" {
		return time.UTC, nil
	}
	return LoadLocation(q.Timezone)
}
