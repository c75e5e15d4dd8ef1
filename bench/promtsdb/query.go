package promtsdb

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
)

// Query is one PromQL range query, ending at the dataset's last sample.
type Query struct {
	// Expr is the PromQL expression.
	Expr string
	// Range is the query's time span.
	Range time.Duration
	// Step is the evaluation step.
	Step time.Duration
}

// The two PromQL figures of the query issue.
var (
	// MaxPerMinuteOneHost is one host, one metric, 1 h, max per minute.
	MaxPerMinuteOneHost = Query{
		Expr:  `max(max_over_time(cpu_usage_user{hostname="host_1"}[1m])) by (__name__)`,
		Range: time.Hour, Step: time.Minute,
	}
	// HourlyAvgByHost is one metric for all hosts over 12 h, hourly average
	// grouped by host.
	HourlyAvgByHost = Query{
		Expr:  `avg(avg_over_time(cpu_usage_user[1h])) by (__name__, hostname)`,
		Range: 12 * time.Hour, Step: time.Hour,
	}
)

// NewEngine returns a PromQL engine with generous limits.
func NewEngine() *promql.Engine {
	return promql.NewEngine(promql.EngineOpts{
		Logger:     slog.New(slog.DiscardHandler),
		MaxSamples: 100_000_000,
		Timeout:    10 * time.Minute,
	})
}

// Run evaluates q against db with its range ending at end (ms) and returns
// the time taken and the number of series in the result.
func Run(ctx context.Context, eng *promql.Engine, db storage.Queryable, q Query, end int64) (time.Duration, int, error) {
	e := time.UnixMilli(end).UTC()
	start := time.Now()
	rq, err := eng.NewRangeQuery(ctx, db, nil, q.Expr, e.Add(-q.Range), e, q.Step)
	if err != nil {
		return 0, 0, fmt.Errorf("promql %s: %w", q.Expr, err)
	}
	defer rq.Close()
	res := rq.Exec(ctx)
	if res.Err != nil {
		return 0, 0, fmt.Errorf("promql %s: %w", q.Expr, res.Err)
	}
	m, err := res.Matrix()
	if err != nil {
		return 0, 0, fmt.Errorf("promql %s: %w", q.Expr, err)
	}
	return time.Since(start), len(m), nil
}
