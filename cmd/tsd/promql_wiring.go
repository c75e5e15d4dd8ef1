package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// openPromQL builds the Prometheus HTTP API's Queryable (query/promql) and
// engine over the read side, with /api/query's limits and the engine's
// settings (tsd.query.promql.*). The parser's features are process-wide,
// set here before anything is served.
func (c *config) openPromQL(rs *readStack, st *ingestStack, log *slog.Logger) (promapi.Options, error) {
	noTracing()
	lim := c.query.limits()
	features, err := promql.ParseFeatures(c.query.promFeatures) // checked when the key was read
	if err != nil {
		return promapi.Options{}, err
	}
	q, err := promql.New(&promql.Options{Reader: rs.reader, Index: st.index, UIDs: st.uids, Limits: lim,
		DelayedNameRemoval: features.DelayedNameRemoval})
	if err != nil {
		return promapi.Options{}, fmt.Errorf("promql queryable: %w", err)
	}
	promql.SetParserFeatures(features)
	timeout := c.promTimeout()
	engOpts := promql.EngineOptions{Limits: lim, MaxSamples: c.query.promMaxSamples, Timeout: timeout,
		LookbackDelta: c.query.promLookback, Features: features, Logger: log}
	eng := promql.NewEngine(engOpts)
	names := eng // the engine for aggregations by dropped names (promapi.Options.NamesEngine)
	switch {
	case !c.query.promKeepNames:
		names = nil
	case !features.DelayedNameRemoval:
		engOpts.Features.DelayedNameRemoval = true
		names = promql.NewEngine(engOpts)
	}
	return promapi.Options{Queryable: q, Engine: eng, NamesEngine: names, Logger: log, MaxSamples: c.query.promMaxSamples,
		Timeout: timeout, LookbackDelta: c.query.promLookback, Features: features.String(),
		Runtime: c.runtimeInfo(), TSDBStatus: tsdbStatus(st), Cache: c.promCache(st)}, nil
}

// soleWriterChanges is the daemon's change tracker (internal/changes)
// when it sees every write to its store, nil otherwise: another daemon
// may write a Bigtable store, and a read-only daemon may share its store
// with a writer. What trusts the tracker (the PromQL answer cache, the
// query reader's skipped Gets) is off without it.
func (c *config) soleWriterChanges(st *ingestStack) *changes.Tracker {
	if c.engine != "pebble" || c.access.mode == modeReadOnly {
		return nil
	}
	return st.changes
}

// promCache is the PromQL answer cache, none without soleWriterChanges.
func (c *config) promCache(st *ingestStack) *promapi.AnswerCache {
	ch := c.soleWriterChanges(st)
	if ch == nil || c.query.promCache <= 0 {
		return nil
	}
	return promapi.NewAnswerCache(promapi.CacheOptions{Changes: ch, Bytes: c.query.promCache,
		MinSteps: c.query.promCacheMinSteps, Horizon: c.retentionHorizon()})
}

// retentionHorizon returns the first millisecond no retention rule can
// hide at a time: now less the shortest retention of any rule, raw or
// rollup; nil when every point is kept forever.
func (c *config) retentionHorizon() func(time.Time) int64 {
	rules, err := retention.Parse(c.ingest.retention)
	if err != nil || rules == nil {
		return nil
	}
	shortest := time.Duration(0)
	for i := range rules.Len() {
		if k := rules.Rule(i).Keep; k != retention.Forever && (shortest == 0 || k < shortest) {
			shortest = k
		}
	}
	if shortest == 0 {
		return nil
	}
	return func(now time.Time) int64 { return now.Add(-shortest).UnixMilli() }
}

// runtimeInfo is what /api/v1/status/runtimeinfo reports of the process.
func (c *config) runtimeInfo() promapi.RuntimeInfo {
	cwd, _ := os.Getwd()
	host, _ := os.Hostname()
	return promapi.RuntimeInfo{StartTime: time.Now().UTC(), CWD: cwd, Hostname: host,
		GOGC: os.Getenv("GOGC"), GODEBUG: os.Getenv("GODEBUG"), StorageRetention: c.ingest.retention}
}

// tsdbStatus answers /api/v1/status/tsdb: headStats' numSeries,
// chunkCount (open hour rows), minTime and maxTime from the head, the
// label lists and numLabelPairs over every series of the series index
// (__name__ the metric, the tags as labels).
func tsdbStatus(st *ingestStack) func(ctx context.Context, limit int) (promapi.TSDBStatus, error) {
	return func(ctx context.Context, limit int) (promapi.TSDBStatus, error) {
		var s promapi.TSDBStatus
		s.MinTime, s.MaxTime = math.MaxInt64, math.MinInt64
		if st.head != nil {
			s.NumSeries = uint64(st.head.NumSeries())
			ts := st.head.TimeStats()
			s.ChunkCount, s.MinTime, s.MaxTime = int64(ts.Rows), ts.MinTime, ts.MaxTime
		}
		if st.index == nil {
			return s, nil
		}
		all, err := st.index.Postings(ctx, index.NameKey, nil)
		if err != nil {
			return s, fmt.Errorf("listing series: %w", err)
		}
		var tsuids []string
		st.index.ForEach(all, func(x index.Series) bool {
			tsuids = append(tsuids, x.TSUID)
			return true
		})
		counts := promapi.LabelCounts{}
		names := labelNames{u: st.uids, ctx: ctx, byKind: [uid.NumKinds]map[uid.ID]string{{}, {}, {}}}
		for _, t := range tsuids {
			if err := names.count(counts, []byte(t)); err != nil {
				return s, err
			}
		}
		counts.Fill(&s, limit)
		return s, nil
	}
}

// labelNames resolves a TSUID's UIDs to label names, caching them.
type labelNames struct {
	u      *uid.UIDs
	ctx    context.Context
	byKind [uid.NumKinds]map[uid.ID]string
}

func (n *labelNames) name(kind uid.Kind, b []byte) (string, []byte, error) {
	id, rest, err := uid.ParseID(b, n.u.Width(kind))
	if err != nil {
		return "", nil, err
	}
	if name, ok := n.byKind[kind][id]; ok {
		return name, rest, nil
	}
	name, err := n.u.Name(n.ctx, kind, id)
	if err != nil {
		return "", nil, fmt.Errorf("status/tsdb: %w", err)
	}
	n.byKind[kind][id] = name
	return name, rest, nil
}

// count adds the labels of one series (its TSUID) to c; a series with a
// UID that has no name (deleted) is left out.
func (n *labelNames) count(c promapi.LabelCounts, tsuid []byte) error {
	metric, rest, err := n.name(uid.Metric, tsuid)
	labels := []string{"__name__", metric}
	for err == nil && len(rest) > 0 {
		var k, v string
		if k, rest, err = n.name(uid.TagK, rest); err == nil {
			v, rest, err = n.name(uid.TagV, rest)
		}
		labels = append(labels, k, v)
	}
	if errors.Is(err, uid.ErrNoSuchID) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := 0; i < len(labels); i += 2 {
		c.Add(labels[i], labels[i+1])
	}
	return nil
}

// promTimeout is tsd.query.promql.timeout, or OpenTSDB's tsd.query.timeout
// when only that one is set (its 0, no timeout, keeps PromQL's default:
// Prometheus's engine has no unbounded setting).
func (c *config) promTimeout() time.Duration {
	if c.byName["tsd.query.promql.timeout"].given || !c.byName["tsd.query.timeout"].given || c.query.timeoutMs == 0 {
		return c.query.promTimeout
	}
	return c.query.timeout()
}

// noTracing installs OpenTelemetry's no-op tracer provider. tsd exports
// no traces, but Prometheus's engine opens several spans per query through
// otel's global provider, whose default delegating tracer takes a lock, a
// map look-up and an allocation per span while no SDK is set: about 3 % of
// a one-series range query's CPU in the daemon's profile.
func noTracing() {
	otel.SetTracerProvider(noop.NewTracerProvider())
}
