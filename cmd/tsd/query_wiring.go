package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/storage"
)

// queryConfig holds /api/query's settings (keys in keys.go).
type queryConfig struct {
	maxBytes    int64 // tsd.query.limits.bytes.default; 0 or -1 unlimited
	maxPoints   int64 // tsd.query.limits.data_points.default; 0 unlimited
	maxSeries   int64 // tsd.query.limits.series.default; 0 unlimited
	timeoutMs   int64 // tsd.query.timeout; 0 none
	allowDelete bool  // tsd.http.query.allow_delete
	skipTagVs   bool  // tsd.query.skip_unresolved_tagvs
}

// int64Key is a non-negative 64-bit integer setting.
func int64Key(dst *int64, name string, def int64, desc string) *key {
	parse := func(s string) (int64, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("want a non-negative integer")
		}
		return n, nil
	}
	return newKey(dst, name, def, "int", parse, func(n int64) string { return strconv.FormatInt(n, 10) }, desc)
}

// limits returns the per-query limits; 0 and -1 mean unlimited.
func (q *queryConfig) limits() read.Limits {
	return read.Limits{MaxSeries: q.maxSeries, MaxPoints: q.maxPoints, MaxBytes: max(q.maxBytes, 0)}
}

// timeout returns the engine's timeout; 0 (none) becomes negative.
func (q *queryConfig) timeout() time.Duration {
	if q.timeoutMs == 0 {
		return -1
	}
	return time.Duration(q.timeoutMs) * time.Millisecond
}

// openQuery builds the store-and-head reader and the /api/query engine
// over the write path st opened.
func (c *config) openQuery(ctx context.Context, db storage.DB, st *ingestStack, log *slog.Logger) (*query.Engine, error) {
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return nil, err
	}
	s := c.settings
	sl, err := salt.New(s.SaltWidth, s.SaltBuckets)
	if err != nil {
		return nil, err
	}
	layout := rowkey.Layout{Widths: s.Widths, Salt: sl, MaxTags: c.maxTags}
	rules, err := retention.Parse(c.ingest.retention)
	if err != nil {
		return nil, fmt.Errorf("tsd.storage.retention: %w", err)
	}
	rd, err := read.New(&read.Options{Data: data, Layout: layout, Head: st.head, UIDs: st.uids,
		Retention: rules, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("query reader: %w", err)
	}
	notes, err := c.openAnnotations(ctx, db)
	if err != nil {
		return nil, err
	}
	q := &c.query
	return query.New(&query.Options{Reader: rd, UIDs: st.uids, Index: st.index, Limits: q.limits(),
		Timeout: q.timeout(), AllowDelete: q.allowDelete, Deleter: &query.StoreDeleter{Table: data, Layout: layout},
		SkipUnresolvedTagVs: q.skipTagVs, Annotations: notes, Logger: log})
}
