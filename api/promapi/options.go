package promapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/api/admit"
	tsdpromql "github.com/tsd-db/tsd/query/promql"
)

// Default values of Options.
const (
	DefaultMaxSamples    = 50_000_000
	DefaultTimeout       = 2 * time.Minute
	DefaultLookbackDelta = 5 * time.Minute
	// DefaultBuildVersion is the Prometheus release whose PromQL engine
	// tsd embeds (module v0.310.0); Grafana reads it from buildinfo to
	// pick the features it uses.
	DefaultBuildVersion = "3.10.0"
)

// Options configure the Prometheus HTTP API. The zero value of each field
// means its default; New calls EnsureDefaults.
type Options struct {
	// Queryable is what PromQL selects from, and what the series, label
	// and label value look-ups read. Default nil: the api package then
	// answers the Prometheus endpoints 501.
	Queryable storage.Queryable
	// Engine runs the queries. Default nil: New builds one from
	// MaxSamples, Timeout and LookbackDelta with the @ modifier and
	// negative offsets on, as in Prometheus 3, and subqueries without a
	// step evaluated every minute (Prometheus's default evaluation
	// interval). The API closes only an engine it built. A given engine
	// must have the @ modifier and negative offsets on: the API parses
	// queries itself, so the engine's check of the two never sees them.
	Engine *promql.Engine
	// NamesEngine, when set, runs a query that Engine would refuse
	// because it groups by metric names a function dropped ("vector
	// cannot contain metrics with the same labelset"; TSBS asks
	// VictoriaMetrics that way), written to keep the names: see
	// query/promql's package doc, Names kept by grouping. It must have
	// delayed name removal on, and the same limits as Engine. Default
	// nil: such a query fails, as in Prometheus. The API never closes it.
	NamesEngine *promql.Engine
	// MaxSamples bounds the samples one query may hold in memory at once;
	// a query over it fails with errorType "execution". Default 50,000,000.
	MaxSamples int
	// Timeout bounds a query's run time when the request gives no shorter
	// timeout parameter. Default 2 minutes.
	Timeout time.Duration
	// LookbackDelta is how far back an instant selector looks for a
	// series' last sample. Default 5 minutes.
	LookbackDelta time.Duration
	// Features is the comma list of PromQL features on, shown as
	// enable-feature by /api/v1/status/flags. Default empty.
	Features string
	// Runtime is what /api/v1/status/runtimeinfo reports of the process
	// beside the Go runtime's figures. Default zero: empty strings and
	// the zero time.
	Runtime RuntimeInfo
	// TSDBStatus returns /api/v1/status/tsdb's figures, with at most limit
	// metrics in SeriesCountByMetricName, the most series first. Default
	// nil: every figure 0 and every list empty.
	TSDBStatus func(ctx context.Context, limit int) (TSDBStatus, error)
	// BuildVersion is data.version in /api/v1/status/buildinfo. Default
	// DefaultBuildVersion.
	BuildVersion string
	// Revision is data.revision in buildinfo. Default empty.
	Revision string
	// Logger receives the engine's log lines. Default slog.Default().
	Logger *slog.Logger
	// Limiter hands out the query slots that query, query_range, series,
	// labels and label values take before reading (shared with OpenTSDB's
	// queries by package api); a request waits for one at most Timeout,
	// and past the queue is answered 503 with errorType "unavailable" and
	// Retry-After. Default nil: no slot is taken.
	Limiter *admit.Limiter
	// Context is the parent of every request's work; cancelling it
	// cancels the queries and look-ups running (api.Server cancels it when
	// it starts to shut down). Default context.Background().
	//
	// The request's fasthttp.RequestCtx is not the parent: it is a
	// context.Context of its own kind, so every context derived from it
	// starts a goroutine to watch its Done channel, a goroutine per query
	// and about a tenth of a short query's CPU; and its Done races with
	// Server.ShutdownWithContext under -race.
	Context context.Context
	// Cache keeps whole answers of range queries and gives them again
	// while nothing they read has changed (cache.go). Default nil: none
	// is kept.
	Cache *AnswerCache
	// MatcherCacheBytes bounds the regex matchers kept compiled between
	// queries (query/promql.Parser), as that type estimates their heap.
	// Default query/promql.DefaultMatcherCacheBytes, 4 MiB.
	MatcherCacheBytes int
}

// EnsureDefaults sets every zero field to its default and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MaxSamples == 0 {
		o.MaxSamples = DefaultMaxSamples
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.LookbackDelta == 0 {
		o.LookbackDelta = DefaultLookbackDelta
	}
	if o.BuildVersion == "" {
		o.BuildVersion = DefaultBuildVersion
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.MatcherCacheBytes == 0 {
		o.MatcherCacheBytes = tsdpromql.DefaultMatcherCacheBytes
	}
	return o
}

// Validate reports the first invalid field, naming it.
func (o *Options) Validate() error {
	if o.MaxSamples < 0 {
		return fmt.Errorf("promapi: MaxSamples %d is negative", o.MaxSamples)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("promapi: Timeout %v is negative", o.Timeout)
	}
	if o.LookbackDelta < 0 {
		return fmt.Errorf("promapi: LookbackDelta %v is negative", o.LookbackDelta)
	}
	return nil
}
