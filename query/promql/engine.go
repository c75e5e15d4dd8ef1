package promql

import (
	"log/slog"
	"time"

	prom "github.com/prometheus/prometheus/promql"

	"github.com/tsd-db/tsd/query/read"
)

// Engine defaults.
const (
	// DefaultMaxSamples is Prometheus's --query.max-samples default.
	DefaultMaxSamples = 50_000_000
	// DefaultTimeout is Prometheus's --query.timeout default.
	DefaultTimeout = 2 * time.Minute
	// DefaultLookbackDelta is Prometheus's --query.lookback-delta default.
	DefaultLookbackDelta = 5 * time.Minute
	// DefaultSubqueryStep is the step of a subquery that gives none
	// (x[1h:]); Prometheus uses its global evaluation interval, 1m by
	// default.
	DefaultSubqueryStep = time.Minute
)

// EngineOptions configure NewEngine. Zero fields take the defaults.
type EngineOptions struct {
	// Limits are tsd's query limits.
	Limits read.Limits
	// MaxSamples bounds the samples a query holds in memory at once.
	// Default Limits.MaxPoints when set, else DefaultMaxSamples.
	MaxSamples int
	// Features are the PromQL features on. Only DelayedNameRemoval is the
	// engine's; the parser's are process-wide (SetParserFeatures).
	// Default all off.
	Features Features
	// Timeout bounds a query's evaluation. Default 2 minutes.
	Timeout time.Duration
	// LookbackDelta is how far back an instant selector looks for a
	// sample. Default 5 minutes.
	LookbackDelta time.Duration
	// SubqueryStep is the step of subqueries written without one. Default
	// 1 minute.
	SubqueryStep time.Duration
	// Logger receives the engine's logs. Default slog.Default().
	Logger *slog.Logger
}

// NewEngine returns a Prometheus engine with tsd's defaults: the @
// modifier and negative offsets on, as in Prometheus 3.
func NewEngine(o EngineOptions) *prom.Engine {
	maxSamples := o.MaxSamples
	switch {
	case maxSamples > 0:
	case o.Limits.MaxPoints > 0:
		maxSamples = int(o.Limits.MaxPoints)
	default:
		maxSamples = DefaultMaxSamples
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.LookbackDelta <= 0 {
		o.LookbackDelta = DefaultLookbackDelta
	}
	if o.SubqueryStep <= 0 {
		o.SubqueryStep = DefaultSubqueryStep
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	step := o.SubqueryStep.Milliseconds()
	return prom.NewEngine(prom.EngineOpts{Logger: o.Logger, MaxSamples: maxSamples, Timeout: o.Timeout,
		LookbackDelta: o.LookbackDelta, EnableAtModifier: true, EnableNegativeOffset: true,
		EnableDelayedNameRemoval: o.Features.DelayedNameRemoval,
		NoStepSubqueryIntervalFn: func(int64) int64 { return step }})
}
