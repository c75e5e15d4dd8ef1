package harness

import (
	"context"
	"fmt"
	"math"
	"runtime/pprof"
	"slices"
	"time"

	prom "github.com/prometheus/prometheus/promql"

	tsdpromql "github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
)

// rollupPromExpr is the PromQL figures' query: hourly averages by host;
// rollupPromCount counts the hour's points by host (count_over_time,
// which WithPushdown rewrites for tsd's Queryable).
const (
	rollupPromExpr  = `avg by (hostname) (avg_over_time(cpu_usage_user[1h]))`
	rollupPromCount = `sum by (hostname) (count_over_time(cpu_usage_user[1h]))`
)

func rollupPromFigures() []Figure {
	return []Figure{
		{
			Name: "rollups: PromQL 1 metric 100 hosts 30 d, avg by (hostname) (avg_over_time(x[1h])) step 1h, row cache off", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "1h rollup cells (tsdb-rollup-1h) and edge points", Measure: rollupProm(rollupPromExpr, true, false)},
			Peer: Side{Name: "same query, rollups off", Measure: rollupProm(rollupPromExpr, false, false)},
		},
		{
			Name: "rollups: PromQL 1 metric 100 hosts 30 d, avg by (hostname) (avg_over_time(x[1h])) step 1h, first query of a new reader, row cache on", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "1h rollup cells (tsdb-rollup-1h) and edge points", Measure: rollupProm(rollupPromExpr, true, true)},
			Peer: Side{Name: "same query, rollups off", Measure: rollupProm(rollupPromExpr, false, true)},
		},
		{
			Name: "rollups: PromQL 1 metric 100 hosts 30 d, sum by (hostname) (count_over_time(x[1h])) step 1h, row cache off", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "1h rollup count cells (tsdb-rollup-1h) and edge points", Measure: rollupProm(rollupPromCount, true, false)},
			Peer: Side{Name: "same query, rollups off (counted while reading)", Measure: rollupProm(rollupPromCount, false, false)},
		},
	}
}

// promRollup is a PromQL engine and Queryable on a new reader of l, and
// the query it times.
type promRollup struct {
	q       *tsdpromql.Queryable
	eng     *prom.Engine
	rollups bool
	expr    string
}

func (l *rollupLoaded) prom(expr string, cacheBytes int64, rollups bool) (*promRollup, error) {
	r, err := read.New(&read.Options{Data: l.w.data, Layout: rowkey.DefaultLayout(), Head: l.w.h, RowCacheBytes: cacheBytes, Rollups: l.ro})
	if err != nil {
		return nil, err
	}
	q, err := tsdpromql.New(&tsdpromql.Options{Reader: r, Index: l.w.ix, UIDs: l.w.u, DisableRollups: !rollups})
	if err != nil {
		return nil, err
	}
	return &promRollup{q: q, eng: tsdpromql.NewEngine(tsdpromql.EngineOptions{}), rollups: rollups, expr: expr}, nil
}

// run answers the figure's query over the whole span (windows ending on
// every hour after the first point), marked for pushdown as the HTTP API
// marks it. The work carries the profiler label rollup_promql=rollups or
// raw (tsdbench -cpuprofile; the goroutines it starts inherit it).
func (p *promRollup) run(l *rollupLoaded) (m prom.Matrix, err error) {
	side := "raw"
	if p.rollups {
		side = "rollups"
	}
	pprof.Do(context.Background(), pprof.Labels("rollup_promql", side), func(ctx context.Context) {
		m, err = p.runLabeled(ctx, l)
	})
	return m, err
}

func (p *promRollup) runLabeled(ctx context.Context, l *rollupLoaded) (prom.Matrix, error) {
	const hour = int64(time.Hour / time.Millisecond)
	start := l.data.Start - l.data.Start%hour + hour
	end := l.data.MaxTime() - l.data.MaxTime()%hour
	rq, err := p.eng.NewRangeQuery(ctx, p.q, nil, p.expr, time.UnixMilli(start), time.UnixMilli(end), time.Hour)
	if err != nil {
		return nil, err
	}
	defer rq.Close()
	res := rq.Exec(tsdpromql.WithPushdown(ctx, p.q, rq.Statement()))
	if res.Err != nil {
		return nil, res.Err
	}
	m, err := res.Matrix()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s: empty result", p.expr)
	}
	// The engine reuses the result's slices once the query is closed.
	out := make(prom.Matrix, len(m))
	for i, s := range m {
		out[i] = prom.Series{Metric: s.Metric.Copy(), Floats: slices.Clone(s.Floats)}
	}
	return out, nil
}

// checkPromRollups compares expr's answers with rollups on and off
// (within 1e-9 relative, in the same order) and that the first used
// rollup cells, once per expression.
func (l *rollupLoaded) checkPromRollups(expr string) error {
	l.promMu.Lock()
	defer l.promMu.Unlock()
	if err, ok := l.promChecked[expr]; ok {
		return err
	}
	err := l.comparePromRollups(expr)
	if l.promChecked == nil {
		l.promChecked = map[string]error{}
	}
	l.promChecked[expr] = err
	return err
}

func (l *rollupLoaded) comparePromRollups(expr string) error {
	on, err := l.prom(expr, -1, true)
	if err != nil {
		return err
	}
	off, err := l.prom(expr, -1, false)
	if err != nil {
		return err
	}
	a, err := on.run(l)
	if err != nil {
		return err
	}
	b, err := off.run(l)
	if err != nil {
		return err
	}
	if on.q.Stats().RollupSelects == 0 {
		return fmt.Errorf("%s read no rollup cells", expr)
	}
	return sameMatrix(a, b)
}

func sameMatrix(a, b prom.Matrix) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d series against %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Metric.String() != b[i].Metric.String() {
			return fmt.Errorf("series %d: %s against %s", i, a[i].Metric, b[i].Metric)
		}
		if len(a[i].Floats) != len(b[i].Floats) {
			return fmt.Errorf("series %s: %d points against %d", a[i].Metric, len(a[i].Floats), len(b[i].Floats))
		}
		for j, x := range a[i].Floats {
			y := b[i].Floats[j]
			if x.T != y.T || math.Abs(x.F-y.F) > 1e-9*math.Abs(y.F) {
				return fmt.Errorf("series %s point %d: %v@%d against %v@%d", a[i].Metric, j, x.F, x.T, y.F, y.T)
			}
		}
	}
	return nil
}

// rollupProm times a PromQL figure's expr with rollups on or off, on one
// reader without row cache or as the first query of a new reader with
// the default row cache (as after a restart).
func rollupProm(expr string, rollups, firstAfterRestart bool) Measure {
	return func(e *Env) (float64, error) {
		l, err := loadRollups(e)
		if err != nil {
			return 0, err
		}
		if err := l.checkPromRollups(expr); err != nil {
			return 0, fmt.Errorf("rollup and raw PromQL answers differ: %w", err)
		}
		if !firstAfterRestart {
			p, err := l.prom(expr, -1, rollups)
			if err != nil {
				return 0, err
			}
			return medianMs(e, func() error { _, err := p.run(l); return err })
		}
		ds := make([]float64, 0, e.Size.QueryRepeats)
		for range max(e.Size.QueryRepeats, 1) {
			p, err := l.prom(expr, 0, rollups)
			if err != nil {
				return 0, err
			}
			d, err := e.Time(func() error { _, err := p.run(l); return err })
			if err != nil {
				return 0, err
			}
			ds = append(ds, float64(d)/float64(time.Millisecond))
		}
		slices.Sort(ds)
		return Median(ds), nil
	}
}
