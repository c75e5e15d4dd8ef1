package promql_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/query/promql"
)

// benchSamples are 100 series of one metric, a point every 15 s over six
// hours (144,000 points).
func benchSamples() []refSample {
	var out []refSample
	for i := range 100 {
		l := labels.FromStrings("__name__", "bench", "host", fmt.Sprintf("h%03d", i), "dc", fmt.Sprint(i%4))
		for j := range int64(1440) {
			out = append(out, refSample{l: l, t: j * 15_000, v: float64(j * int64(i+1))})
		}
	}
	return out
}

// benchStack holds benchSamples, all flushed to the store.
func benchStack(b *testing.B) *stack {
	b.Helper()
	s := openStack(b, stackOptions{})
	ctx := context.Background()
	for i, x := range benchSamples() {
		mustOK(b, s.append(ctx, x.l, x.t, x.v))
		if i%1440 == 1439 {
			mustOK(b, s.commit())
		}
	}
	mustOK(b, s.flushAll(ctx))
	return s
}

var sinkF float64

// BenchmarkRangeQuery: sum by dc of rate over six hours, step 1 min, on
// tsd and, as the peer, on Prometheus's tsdb head holding the same points.
func BenchmarkRangeQuery(b *testing.B) {
	b.Run("tsd", func(b *testing.B) { benchRangeQuery(b, benchStack(b).q) })
	b.Run("prometheus", func(b *testing.B) {
		db := loadProm(context.Background(), b, benchSamples())
		benchRangeQuery(b, db)
	})
}

func benchRangeQuery(b *testing.B, q storage.Queryable) {
	eng := promql.NewEngine(promql.EngineOptions{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		qry, err := eng.NewRangeQuery(ctx, q, nil, `sum by (dc) (rate(bench[5m]))`, time.UnixMilli(0),
			time.UnixMilli(6*hour), time.Minute)
		mustOK(b, err)
		res := qry.Exec(ctx)
		mustOK(b, res.Err)
		qry.Close()
	}
	b.ReportMetric(float64(144_000*b.N)/b.Elapsed().Seconds(), "points/s")
}

// BenchmarkSeriesIterate reads every point of the 100 series.
func BenchmarkSeriesIterate(b *testing.B) {
	s := benchStack(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(144_000 * 16)
	b.ResetTimer()
	for b.Loop() {
		qr, err := s.q.Querier(0, 6*hour)
		mustOK(b, err)
		ss := qr.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "bench"))
		var it chunkenc.Iterator
		for ss.Next() {
			it = ss.At().Iterator(it)
			for it.Next() == chunkenc.ValFloat {
				_, v := it.At()
				sinkF += v
			}
			mustOK(b, it.Err())
		}
		mustOK(b, ss.Err())
	}
}

// BenchmarkPushdown: hourly avg_over_time over six hours, step 1 h, on tsd
// with the range function pushed down (push) and without (raw), and on
// Prometheus's tsdb head holding the same points.
func BenchmarkPushdown(b *testing.B) {
	const e = `avg by (dc) (avg_over_time(bench[1h]))`
	s := benchStack(b)
	b.Run("tsd/push", func(b *testing.B) { benchHourly(b, pushdownEngine{promql.NewEngine(promql.EngineOptions{})}, s.q, e) })
	b.Run("tsd/raw", func(b *testing.B) { benchHourly(b, promql.NewEngine(promql.EngineOptions{}), s.q, e) })
	b.Run("prometheus", func(b *testing.B) {
		benchHourly(b, promql.NewEngine(promql.EngineOptions{}), loadProm(context.Background(), b, benchSamples()), e)
	})
}

// BenchmarkPushdownCount: hourly count_over_time over six hours, step 1
// h, on tsd counted while reading (push: WithPushdown's rewrite) and by
// the engine (raw), and on Prometheus's tsdb head.
func BenchmarkPushdownCount(b *testing.B) {
	const e = `sum by (dc) (count_over_time(bench[1h]))`
	s := benchStack(b)
	b.Run("tsd/push", func(b *testing.B) { benchHourly(b, pushdownEngine{promql.NewEngine(promql.EngineOptions{})}, s.q, e) })
	b.Run("tsd/raw", func(b *testing.B) { benchHourly(b, promql.NewEngine(promql.EngineOptions{}), s.q, e) })
	b.Run("prometheus", func(b *testing.B) {
		benchHourly(b, promql.NewEngine(promql.EngineOptions{}), loadProm(context.Background(), b, benchSamples()), e)
	})
}

func benchHourly(b *testing.B, eng prom.QueryEngine, q storage.Queryable, e string) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		qry, err := eng.NewRangeQuery(ctx, q, nil, e, time.UnixMilli(hour), time.UnixMilli(6*hour), time.Hour)
		mustOK(b, err)
		res := qry.Exec(ctx)
		mustOK(b, res.Err)
		qry.Close()
	}
	b.ReportMetric(float64(144_000*b.N)/b.Elapsed().Seconds(), "points/s")
}

// exprPushdownEngine marks its queries by their expression instead of
// their statement: pushdown without rewriteWindows, the calls left to
// the engine.
type exprPushdownEngine struct{ prom.QueryEngine }

func (e exprPushdownEngine) NewRangeQuery(ctx context.Context, q storage.Queryable, opts prom.QueryOpts, qs string, start, end time.Time, step time.Duration) (prom.Query, error) {
	qry, err := e.QueryEngine.NewRangeQuery(ctx, q, opts, qs, start, end, step)
	if err != nil {
		return nil, err
	}
	return pushdownQuery{Query: qry, q: q, exprOnly: true}, nil
}

// BenchmarkWindowSelector: hourly avg_over_time by host over a week from
// 1h rollup cells (100 series, a point every 10 min), with the calls
// replaced by their selectors (selector: WithPushdown given the
// statement) and left to the engine (call: given the expression). Both
// answers read the same windows; the difference is the engine's.
func BenchmarkWindowSelector(b *testing.B) {
	const e = `avg by (host) (avg_over_time(bench[1h]))`
	s := openStack(b, stackOptions{rollups: true, sole: true})
	ctx := context.Background()
	const week = 7 * 24 * hour
	for i := range 100 {
		l := labels.FromStrings("__name__", "bench", "host", fmt.Sprintf("h%03d", i))
		for t := int64(0); t < week; t += 600_000 {
			mustOK(b, s.append(ctx, l, t, float64(t/600_000%97+int64(i))))
		}
		mustOK(b, s.commit())
	}
	mustOK(b, s.flushAll(ctx))
	benchWindows(b, s, e, hour, week, time.Hour, true)
}

// BenchmarkWindowSelectorMinute: per-minute max_over_time over six hours
// (144,000 raw points, 36,000 windows), steps closer than the lookback:
// the selectors (with staleness markers where a window is empty) against
// the calls.
func BenchmarkWindowSelectorMinute(b *testing.B) {
	const e = `max by (dc) (max_over_time(bench[1m]))`
	benchWindows(b, benchStack(b), e, 0, 6*hour, time.Minute, false)
}

// benchWindows times the range query e over [start, end] (ms) at step on
// s twice: as window selectors (selector) and as calls (call), checking
// that each read the way it is named, from rollup cells when rollups.
func benchWindows(b *testing.B, s *stack, e string, start, end int64, step time.Duration, rollups bool) {
	ctx := context.Background()
	eng := promql.NewEngine(promql.EngineOptions{})
	for _, c := range []struct {
		name string
		eng  prom.QueryEngine
	}{{"selector", pushdownEngine{eng}}, {"call", exprPushdownEngine{eng}}} {
		b.Run(c.name, func(b *testing.B) {
			before := s.q.Stats()
			b.ReportAllocs()
			for b.Loop() {
				qry, err := c.eng.NewRangeQuery(ctx, s.q, nil, e, time.UnixMilli(start), time.UnixMilli(end), step)
				mustOK(b, err)
				res := qry.Exec(ctx)
				mustOK(b, res.Err)
				qry.Close()
			}
			after := s.q.Stats()
			if (after.WindowSelects > before.WindowSelects) != (c.name == "selector") ||
				rollups && after.RollupSelects == before.RollupSelects {
				b.Fatalf("stats %+v then %+v: not the read measured", before, after)
			}
		})
	}
}
