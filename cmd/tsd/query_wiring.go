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
	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
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
	rowReserve  int64  // tsd.query.row_cache.reserve; 0 or -1 none
	// maxOutputPoints is tsd.query.limits.output_points; 0 unlimited.
	maxOutputPoints int64
	// maxConcurrent and maxQueued are tsd.query.max_concurrent and
	// tsd.query.max_queued (0: none waits).
	maxConcurrent, maxQueued int
	// promLookback, promMaxSamples, promTimeout, promFeatures and
	// promKeepNames are tsd.query.promql.*: lookback_delta, max_samples,
	// timeout, features (checked by checkPromFeatures),
	// keep_grouped_names.
	promLookback, promTimeout time.Duration
	promMaxSamples            int
	promFeatures              string
	promKeepNames             bool
	// promCache and promCacheMinSteps are tsd.query.promql.cache.*.
	promCache         int64
	promCacheMinSteps int
}

// checkPromFeatures accepts a comma list of PromQL feature names
// (query/promql.ParseFeatures).
func checkPromFeatures(s string) (string, error) {
	if _, err := promql.ParseFeatures(s); err != nil {
		return "", err
	}
	return s, nil
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
	sl, err := s.Salt()
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
	preAgg *read.Reader // the pre-aggregation tables; nil with rollups off
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
	var h read.Head // none in a read-only daemon (tsd.mode=ro): not a typed nil
	if st.head != nil {
		h = st.head
	}
	fr, err := c.flushRollups(ctx, db)
	if err != nil {
		return nil, err
	}
	var rollups *read.Rollups // queries read the cells the flusher writes
	if fr != nil {
		rollups = &read.Rollups{Config: fr.Config, Tables: fr.Tables}
	}
	rs.reader, err = read.New(&read.Options{Data: rs.data, Layout: rs.layout, Head: h, UIDs: st.uids,
		Retention: rules, Logger: log, Rollups: rollups, Changes: c.soleWriterChanges(st),
		RowCacheBytes: offIfZero(c.query.rowCache), RowCacheReserve: offIfZero(c.query.rowReserve)})
	if err != nil {
		return nil, fmt.Errorf("query reader: %w", err)
	}
	st.moved.r.Store(rs.reader)
	if c.access.mode != modeWriteOnly {
		// Resident memory for the first queries' rows before they come
		// (read.Reader.FillReserve); a daemon that answers none keeps none.
		rs.reader.FillReserve()
	}
	if rs.preAgg, err = c.preAggReader(ctx, db, rs.layout, st.uids, rules, log); err != nil {
		return nil, err
	}
	if rs.notes, err = annotation.NewStore(annotation.Options{Table: rs.data, Layout: &rs.layout}); err != nil {
		return nil, fmt.Errorf("annotations: %w", err)
	}
	return rs, nil
}

// openQuery builds the /api/query engine over the read side.
func (c *config) openQuery(rs *readStack, st *ingestStack, log *slog.Logger) (*opentsdb.Engine, error) {
	q := &c.query
	codecs, err := parseHistogramConfig(c.histograms)
	if err != nil {
		return nil, err
	}
	return opentsdb.New(&opentsdb.Options{Reader: rs.reader, Histograms: codecs, UIDs: st.uids, Index: st.index, Limits: q.limits(),
		MaxOutputPoints: q.maxOutputPoints, Timeout: q.timeout(), AllowDelete: q.allowDelete && c.access.mode != modeReadOnly, Deleter: gatedDeleter{st.gate, &opentsdb.StoreDeleter{Table: rs.data, Layout: rs.layout, Head: st.head}, st.changes}, Location: q.location(),
		SkipUnresolvedTagVs: q.skipTagVs, Annotations: rs.notes, Logger: log,
		PreAgg: rs.preAgg, AggTagKey: c.rollups.aggTagKey, RawAggTagValue: c.rollups.rawAggTagValue})
}

// preAggReader builds the reader of the pre-aggregation tables (nil when
// rollups are off): the default interval's preAggregationTable holds
// pre-aggregates in the raw format, each other interval's its rolled-up
// pre-aggregates as rollup cells. Pre-aggregates are written straight to
// their tables (/api/rollup), never through the head, so it reads no head;
// nor does it cache rows.
func (c *config) preAggReader(ctx context.Context, db storage.DB, layout rowkey.Layout, uids *uid.UIDs, rules *retention.Rules, log *slog.Logger) (*read.Reader, error) {
	cfg := c.rollups.active
	if cfg == nil {
		return nil, nil
	}
	ro := &read.Rollups{Config: cfg, Tables: make([]storage.Table, len(cfg.Intervals))}
	var data storage.Table
	for i, iv := range cfg.Intervals {
		t, err := db.Table(ctx, iv.PreAggTable)
		if err != nil {
			return nil, err
		}
		if iv.Default {
			data = t
			continue
		}
		ro.Tables[i] = t
	}
	if data == nil {
		return nil, nil // no default interval: OpenTSDB has no table to route to
	}
	r, err := read.New(&read.Options{Data: data, Layout: layout, UIDs: uids, Retention: rules, Logger: log, RowCacheBytes: -1, Rollups: ro})
	if err != nil {
		return nil, fmt.Errorf("pre-aggregate reader: %w", err)
	}
	return r, nil
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
