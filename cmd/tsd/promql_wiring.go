package main

import (
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/query/promql"
)

// openPromQL builds the Prometheus HTTP API's Queryable (query/promql) and
// engine over the read side, with /api/query's limits and timeout
// (tsd.query.*).
func (c *config) openPromQL(rs *readStack, st *ingestStack, log *slog.Logger) (promapi.Options, error) {
	noTracing()
	lim := c.query.limits()
	q, err := promql.New(&promql.Options{Reader: rs.reader, Index: st.index, UIDs: st.uids, Limits: lim})
	if err != nil {
		return promapi.Options{}, fmt.Errorf("promql queryable: %w", err)
	}
	eng := promql.NewEngine(promql.EngineOptions{Limits: lim, Timeout: c.query.timeout(), Logger: log})
	return promapi.Options{Queryable: q, Engine: eng, Logger: log}, nil
}

// noTracing installs OpenTelemetry's no-op tracer provider. tsd exports
// no traces, but Prometheus's engine opens several spans per query through
// otel's global provider, whose default delegating tracer takes a lock, a
// map look-up and an allocation per span while no SDK is set: about 3 % of
// a one-series range query's CPU in the daemon's profile.
func noTracing() {
	otel.SetTracerProvider(noop.NewTracerProvider())
}
