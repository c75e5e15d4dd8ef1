package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/last"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/storage"
)

// queryConfig holds /api/query's settings (keys in keys.go).
type queryConfig struct {
	maxBytes    int64  // tsd.query.limits.bytes.default; 0 or -1 unlimited
	maxPoints   int64  // tsd.query.limits.data_points.default; 0 unlimited
	maxSeries   int64  // tsd.query.limits.series.default; 0 unlimited
	timeoutMs   int64  // tsd.query.timeout; 0 none
	allowDelete bool   // tsd.http.query.allow_delete
	skipTagVs   bool   // tsd.query.skip_unresolved_tagvs
	timezone    string // tsd.core.timezone, checked by checkTimezone
	rowCache    int64  // tsd.query.row_cache.size; 0 or -1 off
	// maxOutputPoints is tsd.query.limits.output_points; 0 unlimited.
	maxOutputPoints int64
	// maxConcurrent and maxQueued are tsd.query.max_concurrent and
	// tsd.query.max_queued (0: none waits).
	maxConcurrent, maxQueued int
}

// checkTimezone accepts an IANA zone name, as a query's timezone, or
// empty (UTC).
func checkTimezone(s string) (string, error) {
	if s == "" {
		return s, nil
	}
	if _, err := tsquery.LoadLocation(s); err != nil {
		return "", fmt.Errorf("unknown time zone %q", s)
	}
	return s, nil
}

// location returns the engine's default zone: nil (UTC) when unset.
func (q *queryConfig) location() *time.Location {
	if q.timezone == "" {
		return nil
	}
	l, _ := tsquery.LoadLocation(q.timezone) // checked when set
	return l
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

// layout is the data table's key layout as the store records it (settings
// read by prepareStore): what the flusher writes and every reader reads.
func (c *config) layout() (rowkey.Layout, error) {
	s := c.settings
	sl, err := salt.New(s.SaltWidth, s.SaltBuckets)
	if err != nil {
		return rowkey.Layout{}, err
	}
	l := rowkey.Layout{Widths: s.Widths, Salt: sl, MaxTags: c.maxTags}
	l.EnsureDefaults()
	return l, nil
}

// readStack is the read side every query API shares: one store-and-head
// reader, so /api/stats counts the reads of /api/query, /api/query/last
// and PromQL alike, and one annotation store.
type readStack struct {
	data   storage.Table
	layout rowkey.Layout
	reader *read.Reader
	notes  *annotation.Store
}

// openRead builds the read side over the write path st opened, with the
// retention rules queries obey.
func (c *config) openRead(ctx context.Context, db storage.DB, st *ingestStack, log *slog.Logger) (*readStack, error) {
	rs := &readStack{}
	var err error
	if rs.data, err = db.Table(ctx, c.dataTable); err != nil {
		return nil, err
	}
	if rs.layout, err = c.layout(); err != nil {
		return nil, err
	}
	rules, err := retention.Parse(c.ingest.retention)
	if err != nil {
		return nil, fmt.Errorf("tsd.storage.retention: %w", err)
	}
	rs.reader, err = read.New(&read.Options{Data: rs.data, Layout: rs.layout, Head: st.head, UIDs: st.uids,
		Retention: rules, Logger: log, RowCacheBytes: offIfZero(c.query.rowCache)})
	if err != nil {
		return nil, fmt.Errorf("query reader: %w", err)
	}
	if rs.notes, err = annotation.NewStore(annotation.Options{Table: rs.data, Layout: &rs.layout}); err != nil {
		return nil, fmt.Errorf("annotations: %w", err)
	}
	return rs, nil
}

// openQuery builds the /api/query engine over the read side.
func (c *config) openQuery(rs *readStack, st *ingestStack, log *slog.Logger) (*opentsdb.Engine, error) {
	q := &c.query
	return opentsdb.New(&opentsdb.Options{Reader: rs.reader, UIDs: st.uids, Index: st.index, Limits: q.limits(),
		MaxOutputPoints: q.maxOutputPoints, Timeout: q.timeout(), AllowDelete: q.allowDelete, Deleter: gatedDeleter{st.gate, &opentsdb.StoreDeleter{Table: rs.data, Layout: rs.layout, Head: st.head}}, Location: q.location(),
		SkipUnresolvedTagVs: q.skipTagVs, Annotations: rs.notes, Logger: log})
}

// openLast builds /api/query/last's service over the read side.
func openLast(rs *readStack, st *ingestStack) (*last.Service, error) {
	return last.New(&last.Options{Reader: rs.reader, Index: st.index, UIDs: st.uids})
}

// offIfZero maps a size key's 0 to -1, the options' "off", where 0 would
// mean the default.
func offIfZero(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}
