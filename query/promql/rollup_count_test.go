package promql_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// countH0 is a UTC midnight: hour and day cells start on it.
const countH0 = rd0

// countSamples are the count test's points, on window edges: one at
// exactly H0 (in the window ending at H0, not the next), a duplicate,
// staleness markers inside a window and at exactly H0+2h (counted in no
// window), a point at exactly H0+1h (the window ending there, not the
// next), an empty window (H0+3h, H0+4h], and a second series every 10 s.
func countSamples() []edgeSample {
	const h = int64(3_600_000)
	a := labels.FromStrings("__name__", "cnt", "s", "a")
	stale := math.Float64frombits(value.StaleNaN)
	pts := []series.Point{
		series.IntPoint(countH0, 1), series.IntPoint(countH0+10_000, 2),
		series.IntPoint(countH0+20_000, 3), series.IntPoint(countH0+20_000, 3), // duplicate
		series.Float64Point(countH0+30*60_000, stale), series.IntPoint(countH0+h, 5),
		series.Float64Point(countH0+h+1, 6.5), series.Float64Point(countH0+2*h, stale),
		series.IntPoint(countH0+2*h+5*60_000, 7), series.IntPoint(countH0+3*h, 8),
		series.IntPoint(countH0+4*h+1, 9),
	}
	var out []edgeSample
	for _, p := range pts {
		out = append(out, edgeSample{l: a, p: p})
	}
	b := labels.FromStrings("__name__", "cnt", "s", "b")
	for t := int64(countH0); t <= countH0+6*h; t += 10_000 {
		p := series.Float64Point(t, float64(t%7))
		if t%90_000 == 0 {
			p = series.Float64Point(t, stale)
		}
		out = append(out, edgeSample{l: b, p: p})
	}
	return out
}

// countRef is the samples as Prometheus's tsdb takes them: one per time.
func countRef(samples []edgeSample) []refSample {
	seen := map[string]bool{}
	var out []refSample
	for _, x := range samples {
		k := fmt.Sprint(x.l, x.p.T)
		if !seen[k] {
			seen[k] = true
			out = append(out, refSample{l: x.l, t: x.p.T, v: x.p.Float()})
		}
	}
	return out
}

// TestCountOverTimeRollup: count_over_time at steps aligned to the hour
// cells is answered from the rollup table (its count cells and the
// points at the windows' edges), and equals Prometheus's count on its own
// tsdb and tsd's with rollups off, bit for bit: every point after the
// window's start up to its end, staleness markers and duplicates not
// counted; then again with a late point in the head for a flushed hour.
func TestCountOverTimeRollup(t *testing.T) {
	ctx := context.Background()
	const h = int64(3_600_000)
	samples := countSamples()
	late := edgeSample{l: labels.FromStrings("__name__", "cnt", "s", "a"), p: series.IntPoint(countH0+40*60_000, 4)}
	ref := loadProm(ctx, t, countRef(samples))
	ref2 := loadProm(ctx, t, countRef(append(samples, late)))
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	queries := []rollupModelQuery{
		{expr: `count_over_time(cnt[1h])`, start: countH0, end: countH0 + 6*h, step: h},
		{expr: `count_over_time(cnt[2h])`, start: countH0 + 2*h, end: countH0 + 6*h, step: 2 * h},
		{expr: `sum by (s) (count_over_time(cnt{s=~"a|b"}[1h] offset 1h))`, start: countH0 + h, end: countH0 + 7*h, step: 3 * h},
		{expr: `count_over_time(cnt[1h])`, instant: true, end: countH0 + h},
		{expr: `count_over_time(cnt[3h] @ 1699930800)`, start: countH0, end: countH0 + 6*h, step: h}, // @ H0+3h
	}
	for _, f := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(f.String(), func(t *testing.T) {
			s := openStack(t, stackOptions{format: f, rollups: true, rowCache: -1, clockMs: countH0 + 10*h})
			off, err := promql.New(&promql.Options{Reader: s.reader, Index: s.index, UIDs: s.uids, DisableRollups: true})
			mustOK(t, err)
			for _, x := range samples {
				mustOK(t, s.appendPoint(ctx, x.l, x.p))
			}
			mustOK(t, s.commit())
			_, err = s.flusher.Flush(ctx, time.UnixMilli(countH0+10*h), true)
			mustOK(t, err)
			compareCounts(t, ctx, s, off, ref, eng, queries)
			// The window ending at H0+1h by hand: 10 s, 20 s (once) and
			// H0+1h itself; not H0, not the staleness marker.
			if have := queries[3].run(ctx, eng, s.q); len(have.series) != 2 || have.series[0].v[0] != 3 {
				t.Errorf("count_over_time(cnt[1h]) at H0+1h: %+v, want 3 for s=a", have.series)
			}
			// A late point for a flushed hour, left in the head.
			mustOK(t, s.appendPoint(ctx, late.l, late.p))
			mustOK(t, s.commit())
			compareCounts(t, ctx, s, off, ref2, eng, queries)
		})
	}
}

// compareCounts runs each query on s through the pushdown engine, which
// must answer it from the 1h rollup table, and compares it with ref and
// with rollups off (off), pushed down and not.
func compareCounts(t *testing.T, ctx context.Context, s *stack, off *promql.Queryable, ref storage.Queryable, eng pushdownEngine, queries []rollupModelQuery) {
	t.Helper()
	for _, q := range queries {
		before := s.q.Stats()
		have := q.run(ctx, eng, s.q)
		after := s.q.Stats()
		want := q.run(ctx, eng.QueryEngine, ref)
		if len(want.series) == 0 {
			t.Errorf("%s: empty result compares nothing", q)
		}
		for _, peer := range []struct {
			name string
			res  normResult
		}{{"Prometheus", want}, {"rollups off, pushed down", q.run(ctx, eng, off)}, {"rollups off, plain", q.run(ctx, eng.QueryEngine, off)}} {
			if msg := diffWith(peer.res, have, identical); msg != "" {
				t.Errorf("%s against %s: %s", q, peer.name, msg)
			}
		}
		if n := after.RollupTables["tsdb-rollup-1h"] - before.RollupTables["tsdb-rollup-1h"]; n == 0 {
			t.Errorf("%s: not answered from tsdb-rollup-1h (stats %+v)", q, after)
		}
	}
}

// TestCountMarkerInQuery: a query that writes the count marker's matcher
// itself keeps its ordinary meaning (a label no series has): it neither
// turns a sum into a count nor values into ones, as on Prometheus's tsdb.
func TestCountMarkerInQuery(t *testing.T) {
	ctx := context.Background()
	const h = int64(3_600_000)
	samples := countSamples()
	ref := loadProm(ctx, t, countRef(samples))
	s := openStack(t, stackOptions{rollups: true, rowCache: -1, clockMs: countH0 + 10*h})
	for _, x := range samples {
		mustOK(t, s.appendPoint(ctx, x.l, x.p))
	}
	mustOK(t, s.commit())
	_, err := s.flusher.Flush(ctx, time.UnixMilli(countH0+10*h), true)
	mustOK(t, err)
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	for _, e := range []string{
		`sum_over_time(cnt{__tsd_count__=""}[1h])`, `sum_over_time(cnt{__tsd_count__="1"}[1h])`,
		`count_over_time(cnt{__tsd_count__=""}[1h])`, `sum_over_time(cnt{__tsd_count__!="x"}[1h])`,
		`cnt{__tsd_count__=""}`, `max_over_time(cnt{__tsd_count__=""}[1h])`,
	} {
		q := rollupModelQuery{expr: e, start: countH0, end: countH0 + 6*h, step: h}
		want := q.run(ctx, plain, ref)
		if msg := diffWith(want, q.run(ctx, eng, s.q), identical); msg != "" {
			t.Errorf("%s: %s", q, msg)
		}
		if (len(want.series) == 0) != (e == `sum_over_time(cnt{__tsd_count__="1"}[1h])`) {
			t.Errorf("%s: %d series", q, len(want.series))
		}
	}
}

// TestWithPushdownRewritesCounts: over tsd's Queryable, WithPushdown
// turns count_over_time over a selector into sum_over_time with the count
// marker, once however often it is called; over another Queryable, or
// with a subquery, it leaves the query as written.
func TestWithPushdownRewritesCounts(t *testing.T) {
	ctx := context.Background()
	s := smallStack(t, stackOptions{})
	ref := loadProm(ctx, t, nil)
	for _, c := range []struct {
		expr, tsd string // tsd "": unchanged
	}{
		{`count_over_time(up[5m]) / count_over_time((up{job="a"}[5m] offset 1m))`,
			`sum_over_time(up{__tsd_count__=""}[5m]) / sum_over_time((up{__tsd_count__="",job="a"}[5m] offset 1m))`},
		{`sum by (job) (count_over_time(up[1h] @ 100))`, `sum by (job) (sum_over_time(up{__tsd_count__=""}[1h] @ 100.000))`},
		{`count_over_time(up[5m]) + count_over_time(up[5m:1m])`, ""}, // a subquery: not marked
		{`count(up) + count_over_time(sum(up)[5m:])`, ""},
	} {
		for _, q := range []storage.Queryable{ref, s.q} {
			n, err := parser.ParseExpr(c.expr)
			mustOK(t, err)
			want := n.String()
			if q == s.q && c.tsd != "" {
				want = c.tsd
			}
			promql.WithPushdown(ctx, q, n)
			promql.WithPushdown(ctx, q, n)
			if got := n.String(); got != want {
				t.Errorf("%s over %T: %s, want %s", c.expr, q, got, want)
			}
		}
	}
}
