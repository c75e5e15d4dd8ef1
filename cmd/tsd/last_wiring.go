package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query/last"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/storage"
)

// openLast builds /api/query/last's service over the write path st opened:
// the series index, the head and the store, with the store's recorded
// layout and the retention rules queries obey.
func (c *config) openLast(ctx context.Context, db storage.DB, st *ingestStack, log *slog.Logger) (*last.Service, error) {
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
		return nil, fmt.Errorf("last-point reader: %w", err)
	}
	return last.New(&last.Options{Reader: rd, Index: st.index, UIDs: st.uids})
}
