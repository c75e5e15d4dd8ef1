package main

import (
	"fmt"
	"log/slog"

	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/query/promql"
)

// openPromQL builds the Prometheus HTTP API's Queryable (query/promql) and
// engine over the read side, with /api/query's limits and timeout
// (tsd.query.*).
func (c *config) openPromQL(rs *readStack, st *ingestStack, log *slog.Logger) (promapi.Options, error) {
	lim := c.query.limits()
	q, err := promql.New(&promql.Options{Reader: rs.reader, Index: st.index, UIDs: st.uids, Limits: lim})
	if err != nil {
		return promapi.Options{}, fmt.Errorf("promql queryable: %w", err)
	}
	eng := promql.NewEngine(promql.EngineOptions{Limits: lim, Timeout: c.query.timeout(), Logger: log})
	return promapi.Options{Queryable: q, Engine: eng, Logger: log}, nil
}
