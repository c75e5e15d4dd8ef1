package promql_test

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/query/promql"
)

// pushdownEngine runs every query with its Exec context marked by
// promql.WithPushdown, as the HTTP API does.
type pushdownEngine struct{ prom.QueryEngine }

func (e pushdownEngine) NewInstantQuery(ctx context.Context, q storage.Queryable, opts prom.QueryOpts, qs string, ts time.Time) (prom.Query, error) {
	qry, err := e.QueryEngine.NewInstantQuery(ctx, q, opts, qs, ts)
	if err != nil {
		return nil, err
	}
	return pushdownQuery{Query: qry, q: q}, nil
}

func (e pushdownEngine) NewRangeQuery(ctx context.Context, q storage.Queryable, opts prom.QueryOpts, qs string, start, end time.Time, step time.Duration) (prom.Query, error) {
	qry, err := e.QueryEngine.NewRangeQuery(ctx, q, opts, qs, start, end, step)
	if err != nil {
		return nil, err
	}
	return pushdownQuery{Query: qry, q: q}, nil
}

// pushdownQuery is a query and the Queryable it runs on; exprOnly marks
// it by its expression instead of its statement (pushdown without
// WithPushdown's window rewrite).
type pushdownQuery struct {
	prom.Query
	q        storage.Queryable
	exprOnly bool
}

func (q pushdownQuery) Exec(ctx context.Context) *prom.Result {
	var n parser.Node = q.Statement()
	if q.exprOnly {
		n = q.Statement().(*parser.EvalStmt).Expr
	}
	return q.Query.Exec(promql.WithPushdown(ctx, q.q, n))
}

// builtinPushdowns counts the pushed-down Selects of the promqltest stores.
var builtinPushdowns atomic.Int64

// genSpecial is a gauge of awkward values: NaN, infinities, values whose
// sum overflows (avg_over_time's incremental mean), negative zero,
// staleness markers and integers (stored as such) near and beyond 2^53,
// every 20 s with gaps.
func genSpecial(r *rand.Rand) []refSample {
	l := labels.FromStrings("__name__", "special_d", "job", "special")
	vals := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308, -1e308, math.Copysign(0, -1), 0,
		math.Float64frombits(value.StaleNaN), 1.5, -2.25}
	ints := []int64{3, -7, 0, 1<<53 - 1, 1 << 53, -(1 << 53), 1 << 60, -(1 << 61)}
	var out []refSample
	for _, t := range times(r, 20_000) {
		x := refSample{l: l, t: t, v: r.NormFloat64() * 10}
		switch r.IntN(6) {
		case 0:
			x.v = vals[r.IntN(len(vals))]
		case 1, 2:
			x.v, x.isInt = float64(ints[r.IntN(len(ints))]), true
		}
		out = append(out, x)
	}
	return out
}

// pushdownCase is a range query at a step, and whether its Selects may
// push a range function down.
type pushdownCase struct {
	expr string
	step time.Duration
	push bool
}

// sumsSeries reports whether the case's expression adds values of several
// series, whose order (tsd's differs from Prometheus's) changes the last
// bits.
func (c pushdownCase) sumsSeries() bool { return strings.HasPrefix(c.expr, "avg(") }

func pushdownCases() []pushdownCase {
	m := time.Minute
	return []pushdownCase{
		{`max_over_time(gauge_a[10m])`, 10 * m, true},
		{`avg_over_time(gauge_a[5m])`, 10 * m, true},
		{`sum_over_time(gauge_a{job="api"}[1h])`, 60 * m, true},
		{`min_over_time(counter_b[15m])`, 20 * m, true},
		{`last_over_time(gauge_c[10m])`, 10 * m, true},
		{`present_over_time(gauge_c[5m])`, 5 * m, true},
		{`avg_over_time(gauge_c[3m])`, 7 * m, true},
		{`last_over_time(gauge_c[1m])`, m, true},
		{`avg_over_time(gauge_a[90s])`, 2 * m, true},
		{`max_over_time(gauge_a[10m] offset 25m)`, 10 * m, true},
		{`sum_over_time(gauge_a[10m] offset -5m)`, 15 * m, true},
		{`avg_over_time(gauge_a[30m] @ ` + at(2*hour) + `)`, m, true},
		{`max_over_time(gauge_c[20m] @ end() offset 5m)`, 3 * m, true},
		{`max(max_over_time(gauge_a[1m])) by (__name__)`, m, true},
		{`avg(avg_over_time(gauge_a[1h])) by (__name__, job)`, 60 * m, true},
		{`sum_over_time(gauge_a[10m]) / avg_over_time(gauge_a[10m])`, 10 * m, true},
		{`max_over_time(nonexistent_metric[10m])`, 10 * m, true},
		{`sum_over_time(special_d[2m])`, 2 * m, true},
		{`sum_over_time(special_d[10m])`, 10 * m, true},
		{`sum_over_time(counter_b[10m])`, 10 * m, true},
		{`avg_over_time(counter_b[1h])`, 60 * m, true},
		{`avg_over_time(counter_b[45s])`, m, true},
		{`avg_over_time(special_d[5m])`, 5 * m, true},
		{`avg_over_time(special_d[1h])`, 60 * m, true},
		{`max_over_time(special_d[3m])`, 4 * m, true},
		{`min_over_time(special_d[3m])`, 3 * m, true},
		{`last_over_time(special_d[1m])`, m, true},
		{`present_over_time(special_d[40s])`, m, true},
		{`count_over_time(gauge_a[10m])`, 10 * m, true},
		{`count_over_time(gauge_c[7m])`, 9 * m, true},
		{`count_over_time(special_d[5m] offset 3m)`, 5 * m, true},
		{`sum by (job) (count_over_time(gauge_c[1h]))`, 60 * m, true},
		{`count_over_time(gauge_a[30m] @ ` + at(2*hour) + `)`, m, true},
		// Count mode, not pushed down: every sample reads as 1.
		{`count_over_time(gauge_c[10m])`, 5 * m, false},
		// Overlapping windows, functions not idempotent on one sample,
		// subqueries (whose selectors' hints hold the outer step).
		{`max_over_time(gauge_a[10m])`, 5 * m, false},
		{`stddev_over_time(gauge_a[10m])`, 10 * m, false},
		{`quantile_over_time(0.5, gauge_a[10m])`, 10 * m, false},
		{`rate(counter_b[5m])`, 5 * m, false},
		{`max_over_time(max_over_time(gauge_a[1m])[10m:1m])`, 10 * m, false},
		{`sum_over_time(avg_over_time(gauge_a[2m])[1h:2m])`, 60 * m, false},
		{`avg_over_time(gauge_a[10m]) + sum_over_time(gauge_a[10m:1m])`, 10 * m, false},
	}
}

// comparePushdown runs the pushdown cases through the pushdown engine on
// got and the plain engine on ref, as range queries and at every
// reference instant, requires the very same bits (pushdown repeats the
// engine's arithmetic), and checks that got pushed down exactly when
// allowed.
func comparePushdown(t *testing.T, ref storage.Queryable, got *promql.Queryable) {
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	ctx := context.Background()
	st0 := got.Stats()
	defer func() {
		// Both evaluations ran: selections of 8 series or more all at once
		// (ahead), smaller ones streaming as the engine iterates.
		st := got.Stats()
		if ahead := st.PushdownAhead - st0.PushdownAhead; ahead == 0 || ahead >= st.PushdownSelects-st0.PushdownSelects {
			t.Errorf("stats %+v then %+v: want both ahead and streaming evaluations", st0, st)
		}
		// Some of them were selectors in place of their calls
		// (rewriteWindows), some calls.
		if win := st.WindowSelects - st0.WindowSelects; win == 0 || win >= st.PushdownSelects-st0.PushdownSelects {
			t.Errorf("stats %+v then %+v: want both window selectors and calls", st0, st)
		}
	}()
	for _, c := range pushdownCases() {
		eq := identical
		if c.sumsSeries() {
			eq = closeTo
		}
		before := got.Stats().PushdownSelects
		start, end := refStart-10*60_000, refEnd+10*60_000
		want := rangeStep(ctx, plain, ref, c.expr, start, end, c.step)
		have := rangeStep(ctx, eng, got, c.expr, start, end, c.step)
		if msg := diffWith(want, have, eq); msg != "" {
			t.Errorf("%s step %v: %s", c.expr, c.step, msg)
		}
		if want.err == "" && len(want.series) == 0 && c.expr != `max_over_time(nonexistent_metric[10m])` {
			t.Errorf("%s step %v: empty result compares nothing", c.expr, c.step)
		}
		if pushed := got.Stats().PushdownSelects > before; pushed != c.push {
			t.Errorf("%s step %v: pushed down %v, want %v", c.expr, c.step, pushed, c.push)
		}
		for _, at := range refInstants {
			w := instant(ctx, plain, ref, c.expr, at)
			h := instant(ctx, eng, got, c.expr, at)
			if msg := diffWith(w, h, eq); msg != "" {
				t.Errorf("%s at %d: %s", c.expr, at, msg)
			}
		}
	}
}

func rangeStep(ctx context.Context, eng prom.QueryEngine, q storage.Queryable, e string, start, end int64, step time.Duration) normResult {
	qry, err := eng.NewRangeQuery(ctx, q, nil, e, time.UnixMilli(start), time.UnixMilli(end), step)
	if err != nil {
		return normResult{err: err.Error()}
	}
	defer qry.Close()
	return normalize(qry.Exec(ctx))
}

// TestPushdownDisabled: Options.DisablePushdown and an unmarked context
// both keep Select's raw samples.
func TestPushdownDisabled(t *testing.T) {
	s := smallStack(t, stackOptions{})
	off, err := promql.New(&promql.Options{Reader: s.reader, Index: s.index, UIDs: s.uids, DisablePushdown: true})
	mustOK(t, err)
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	ctx := context.Background()
	const e = `max_over_time(up[10m])`
	want := rangeStep(ctx, plain, s.q, e, 0, 10*hour, 10*time.Minute)
	if s.q.Stats().PushdownSelects != 0 {
		t.Fatal("an unmarked context pushed down")
	}
	if got := rangeStep(ctx, eng, off, e, 0, 10*hour, 10*time.Minute); diffResults(want, got) != "" || off.Stats().PushdownSelects != 0 {
		t.Fatalf("DisablePushdown: %d pushdowns, diff %s", off.Stats().PushdownSelects, diffResults(want, got))
	}
	got := rangeStep(ctx, eng, s.q, e, 0, 10*hour, 10*time.Minute)
	if msg := diffResults(want, got); msg != "" {
		t.Fatal(msg)
	}
	if st := s.q.Stats(); st.PushdownSelects != 1 || st.PushdownSeries != 3 {
		t.Fatalf("stats %+v, want 1 select of 3 series", st)
	}
	// A window every 10 minutes from 0 to 600m, (e-10m, e], each holding a
	// point: (-10m, 0] the one at 0, (590m, 600m] those up to 599m.
	if n := len(want.series); n != 3 || len(want.series[0].t) != 61 {
		t.Fatalf("%d series, %v", n, want.series)
	}
}

// TestWithPushdownMarks: only queries without subqueries and without
// anchored or smoothed selectors are marked.
func TestWithPushdownMarks(t *testing.T) {
	parser.EnableExtendedRangeSelectors = true
	defer func() { parser.EnableExtendedRangeSelectors = false }()
	s := smallStack(t, stackOptions{})
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	for _, c := range []struct {
		expr string
		push bool
	}{
		{`max_over_time(up[10m])`, true},
		{`max_over_time(up[10m]) + max_over_time(up[1h:10m])`, false},
		{`max_over_time(up[10m]) + rate(up[10m] anchored)`, false},
		{`max_over_time(up[10m]) - rate(up[10m] smoothed)`, false},
	} {
		before := s.q.Stats().PushdownSelects
		qry, err := plain.NewRangeQuery(context.Background(), s.q, nil, c.expr, time.UnixMilli(0), time.UnixMilli(10*hour), time.Hour)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		res := qry.Exec(promql.WithPushdown(context.Background(), s.q, qry.Statement()))
		mustOK(t, res.Err)
		qry.Close()
		if pushed := s.q.Stats().PushdownSelects > before; pushed != c.push {
			t.Errorf("%s: pushed down %v, want %v", c.expr, pushed, c.push)
		}
	}
	if ctx := promql.WithPushdown(context.Background(), s.q, nil); ctx != context.Background() {
		t.Error("a nil node marked the context")
	}
}
