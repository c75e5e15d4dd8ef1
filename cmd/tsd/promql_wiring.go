package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/storage"
)

// openPromQL builds the Prometheus HTTP API's Queryable (query/promql) and
// engine over the write path st opened, with /api/query's limits and
// timeout (tsd.query.*).
func (c *config) openPromQL(ctx context.Context, db storage.DB, st *ingestStack, log *slog.Logger) (promapi.Options, error) {
	rd, err := c.openReader(ctx, db, st, log)
	if err != nil {
		return promapi.Options{}, err
	}
	lim := c.query.limits()
	q, err := promql.New(&promql.Options{Reader: rd, Index: st.index, UIDs: st.uids, Limits: lim})
	if err != nil {
		return promapi.Options{}, fmt.Errorf("promql queryable: %w", err)
	}
	eng := promql.NewEngine(promql.EngineOptions{Limits: lim, Timeout: c.query.timeout(), Logger: log})
	return promapi.Options{Queryable: q, Engine: eng, Logger: log}, nil
}

// openReader builds a store-and-head reader over the data table.
func (c *config) openReader(ctx context.Context, db storage.DB, st *ingestStack, log *slog.Logger) (*read.Reader, error) {
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return nil, err
	}
	s := c.settings
	sl, err := salt.New(s.SaltWidth, s.SaltBuckets)
	if err != nil {
		return nil, err
	}
	rules, err := retention.Parse(c.ingest.retention)
	if err != nil {
		return nil, fmt.Errorf("tsd.storage.retention: %w", err)
	}
	rd, err := read.New(&read.Options{Data: data, Layout: rowkey.Layout{Widths: s.Widths, Salt: sl, MaxTags: c.maxTags},
		Head: st.head, UIDs: st.uids, Retention: rules, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("query reader: %w", err)
	}
	return rd, nil
}
