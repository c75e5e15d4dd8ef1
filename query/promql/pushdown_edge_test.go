package promql_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

var edgeAll = flag.Bool("promql.edge.all", false, "TestPushdownEdges crosses every range with every modifier (long runs)")

// edgeH0 is an hour boundary: the edge data's hour rows start on it.
const edgeH0 = int64(1_699_999_200_000)

// edgeSample is one sample of the edge data, typed as tsd stores it;
// Prometheus gets p.Float().
type edgeSample struct {
	l    labels.Labels
	p    series.Point
	late bool // written after the first flush, out of order
}

func edgeLabels(s, kind string) labels.Labels {
	return labels.FromStrings("__name__", "edge", "s", s, "kind", kind)
}

// genEdges makes ten series over [edgeH0, edgeH0+4h] shaped for the
// pushed-down functions' corner cases: points exactly on window ends and
// hour-row boundaries, integers around and beyond 2^53 mixed with floats,
// NaN, infinities, -0, sums that overflow to Inf, staleness markers
// (a run longer than a window and across a row boundary), a sparse series,
// late points and a series only in the head.
func genEdges(r *rand.Rand) []edgeSample {
	var out []edgeSample
	add := func(l labels.Labels, p series.Point, late bool) { out = append(out, edgeSample{l, p, late}) }
	const h = int64(time.Hour / time.Millisecond)
	grid, kahan := edgeLabels("grid", "f"), edgeLabels("kahan", "f")
	for t := edgeH0; t <= edgeH0+4*h; t += 15_000 {
		v := r.NormFloat64() * 1e3
		if r.IntN(50) == 0 {
			v = math.Copysign(1e16, v)
		}
		add(grid, series.Float64Point(t, v), false)
		kv := []float64{1e16, 1, -1e16, 0.1, 3.3e-5, -0.7, 1e100, -1e100, 2.5}[r.IntN(9)]
		add(kahan, series.Float64Point(t+3, kv), false)
	}
	ints, mixed := edgeLabels("ints", "i"), edgeLabels("mixed", "m")
	big := []int64{1<<53 - 1, 1 << 53, 1<<53 + 1, -(1<<53 + 1), 1<<60 + 3, -(1 << 62) - 5, math.MaxInt64, math.MinInt64 + 1}
	for t := edgeH0; t <= edgeH0+4*h; t += 10_000 {
		x := r.Int64N(2000) - 1000
		if r.IntN(8) == 0 {
			x = big[r.IntN(len(big))]
		}
		add(ints, series.IntPoint(t, x), false)
		if (t/10_000)%2 == 0 || r.IntN(3) == 0 {
			add(mixed, series.IntPoint(t+5_000, r.Int64N(100)), false)
		} else {
			add(mixed, series.Float64Point(t+5_000, float64(r.IntN(100))+0.25), false)
		}
	}
	special, over := edgeLabels("special", "f"), edgeLabels("overflow", "f")
	vals := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1e308, 1e308, 1e308, -1e308,
		5e-324, math.Float64frombits(value.StaleNaN), 1.5, -2.25, math.MaxFloat64}
	for t := edgeH0; t <= edgeH0+4*h; t += 30_000 {
		add(special, series.Float64Point(t, vals[r.IntN(len(vals))]), false)
	}
	for t := edgeH0; t <= edgeH0+4*h; t += 15_000 {
		v := 1e308
		switch {
		case (t-edgeH0)/(20*60_000)%3 == 1:
			v = r.Float64() * 10
		case (t-edgeH0)/(20*60_000)%3 == 2:
			v = -1.5e308
		}
		add(over, series.Float64Point(t, v), false)
	}
	stale := edgeLabels("stale", "f")
	for t := edgeH0; t <= edgeH0+4*h; t += 15_000 {
		v := r.Float64()
		if (t >= edgeH0+55*60_000 && t < edgeH0+70*60_000) || r.IntN(15) == 0 {
			v = math.Float64frombits(value.StaleNaN)
		}
		add(stale, series.Float64Point(t, v), false)
	}
	sparse := edgeLabels("sparse", "i")
	for t := edgeH0 + 210_000; t <= edgeH0+4*h; t += 7 * 60_000 {
		add(sparse, series.IntPoint(t, r.Int64N(1<<40)), false)
	}
	late := edgeLabels("late", "f")
	for t := edgeH0 + 1; t <= edgeH0+4*h; t += 60_000 {
		add(late, series.Float64Point(t, r.NormFloat64()), r.IntN(2) == 0)
	}
	// A second metric, so that one Select reads two metrics.
	b1, b2 := labels.FromStrings("__name__", "edge_b", "s", "b1", "kind", "i"), labels.FromStrings("__name__", "edge_b", "s", "b2", "kind", "f")
	for t := edgeH0 + 7; t <= edgeH0+4*h; t += 20_000 {
		add(b1, series.IntPoint(t, r.Int64N(1<<54)), false)
		add(b2, series.Float64Point(t+5_000, r.ExpFloat64()), r.IntN(4) == 0)
	}
	head := edgeLabels("head", "f")
	for t := edgeH0 + 3*h + 20*60_000; t <= edgeH0+4*h; t += 15_000 {
		add(head, series.Float64Point(t, r.NormFloat64()*5), false)
	}
	return out
}

// loadEdges writes the edge data into tsd: every sample but the late ones
// in a shuffled order, a flush of the first three hours, then the late
// ones (earlier hours included) and a flush of the first two, so hours 0
// and 1 have late cells in the store, hour 2 a stored row plus late
// points in the head, and hour 3 and the last point are only in the head.
func loadEdges(ctx context.Context, t *testing.T, s *stack, r *rand.Rand, samples []edgeSample) {
	var first, second []edgeSample
	for _, x := range samples {
		if x.late {
			second = append(second, x)
		} else {
			first = append(first, x)
		}
	}
	r.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	for i, pass := range [][]edgeSample{first, second} {
		for _, x := range pass {
			mustOK(t, s.appendPoint(ctx, x.l, x.p))
		}
		mustOK(t, s.commit())
		mustOK(t, s.flushBefore(ctx, edgeH0+int64(3-i)*3_600_000))
	}
}

func edgeRef(samples []edgeSample) []refSample {
	out := make([]refSample, len(samples))
	for i, x := range samples {
		out[i] = refSample{l: x.l, t: x.p.T, v: x.p.Float()}
	}
	return out
}

// edgeAt formats edgeH0+ms as an @ time in seconds.
func edgeAt(ms int64) string { return fmt.Sprintf("%.3f", float64(edgeH0+ms)/1000) }

// edgeQuery is one compared query: an instant query (step 0) at start,
// or a range query.
type edgeQuery struct {
	expr              string
	start, end        int64
	step              time.Duration
	exact, wantPushed bool
}

func (q edgeQuery) String() string {
	if q.step == 0 {
		return fmt.Sprintf("%s at H0%+dms", q.expr, q.start-edgeH0)
	}
	return fmt.Sprintf("%s over [H0%+dms, H0%+dms] step %v", q.expr, q.start-edgeH0, q.end-edgeH0, q.step)
}

// edgeInstants are instant query times: on hour-row boundaries and on
// points, a millisecond either side, in the head, past the data.
var edgeInstants = []int64{0, 3_600_000, 3_600_001, 3_599_999, 2*3_600_000 + 15_000, 2*3_600_000 + 15_003,
	3*3_600_000 + 30*60_000, 4 * 3_600_000, 4*3_600_000 + 5*60_000, 57*60_000 + 3}

// edgeQueries crosses the pushed-down functions with ranges (shorter than
// every point interval up to longer than a row), both evaluation paths
// (ten series: evaluated ahead; three: streaming), offsets and @, instant
// queries and range queries at steps of at least the range, aligned and
// not; then aggregations and arithmetic on top.
func edgeQueries() []edgeQuery {
	funcs := []string{"avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "last_over_time", "present_over_time",
		"count_over_time"}
	ranges := []time.Duration{time.Millisecond, time.Second, 15 * time.Second, 30 * time.Second, time.Minute,
		7 * time.Minute, time.Hour, 90 * time.Minute}
	sels := []string{`edge`, `edge{s=~"ints|special|stale"}`}
	mods := []string{" offset 15s", " offset -30m", " @ " + edgeAt(3_600_000), " @ " + edgeAt(2*3_600_000+7) + " offset 1m"}
	var out []edgeQuery
	for _, f := range funcs {
		for _, sel := range sels {
			for _, r := range ranges {
				rs := model(r)
				ms := []string{""}
				if *edgeAll || r == 15*time.Second || r == time.Hour {
					ms = append(ms, mods...)
				}
				for _, m := range ms {
					out = append(out, edgeCases(fmt.Sprintf("%s(%s[%s]%s)", f, sel, rs, m), r, true, true)...)
				}
			}
		}
	}
	for _, e := range []struct {
		expr  string
		exact bool
	}{
		{`max by (kind) (max_over_time(edge[1h]))`, true},
		{`min without (s) (min_over_time(edge[15s]))`, true},
		{`sum by (kind) (sum_over_time(edge{kind="i"}[1h]))`, false},
		{`avg without (s) (avg_over_time(edge[90m]))`, false},
		{`count by (kind) (present_over_time(edge[1m]))`, true},
		{`sum by (kind) (count_over_time(edge[1h]))`, true},
		{`last_over_time(edge[30s]) * 2`, true},
		{`sum_over_time(edge[1h]) / avg_over_time(edge[1h])`, true},
		{`topk(3, max_over_time(edge[1h]))`, true},
		{`-min_over_time(edge{s="special"}[1h] offset 1h)`, true},
		{`max_over_time({__name__=~"edge.*"}[30m])`, true},
		{`sum_over_time({__name__=~"edge.*", s=~"b.|ints|mixed"}[1h])`, true},
	} {
		out = append(out, edgeCases(e.expr, time.Hour+30*time.Minute, e.exact, true)...)
	}
	// One window however small the step: @ fixes it.
	for _, e := range []string{`max_over_time(edge[1h] @ ` + edgeAt(3_600_000) + `)`,
		`sum_over_time(edge[90m] @ ` + edgeAt(2*3_600_000+1) + ` offset -7m)`, `avg_over_time((edge[2h] @ ` + edgeAt(4*3_600_000) + `))`} {
		out = append(out, edgeQuery{e, edgeH0 + 13, edgeH0 + 3*3_600_000, time.Minute, true, true})
	}
	return out
}

// edgeCases is expr at every edge instant and over two ranges whose step
// is at least r: from an hour boundary, and from an odd millisecond at an
// odd step.
func edgeCases(expr string, r time.Duration, exact, pushed bool) []edgeQuery {
	var out []edgeQuery
	for _, at := range edgeInstants {
		out = append(out, edgeQuery{expr: expr, start: edgeH0 + at, end: edgeH0 + at, exact: exact, wantPushed: pushed})
	}
	step := max(r, 15*time.Second)
	out = append(out,
		edgeQuery{expr, edgeH0, edgeH0 + 4*3_600_000 + 5*60_000, step, exact, pushed},
		edgeQuery{expr, edgeH0 + 13, edgeH0 + 4*3_600_000, step + 7003*time.Millisecond, exact, pushed})
	return out
}

// model formats d as a PromQL duration.
func model(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

// TestPushdownEdges compares pushed-down range functions on the edge data
// with Prometheus's engine on its own tsdb holding the same samples: the
// same series, timestamps and value bits (sums across series within 1e-12
// relative, their order differing), pushed down and through the plain
// path, cold and from the row cache.
func TestPushdownEdges(t *testing.T) {
	ctx := context.Background()
	samples := genEdges(rand.New(rand.NewPCG(11, 12)))
	ref := loadProm(ctx, t, edgeRef(samples))
	queries := append(edgeQueries(), randomEdgeQueries(rand.New(rand.NewPCG(15, 16)), *edgeRandom)...)
	// Then late points for rows already read (and cached): hour 0's
	// written to the store as new cells, the others left in the head; and
	// new values for points of hours 2 (stored) and 3 (in the head), which
	// replace the old ones.
	late := genLateEdges(rand.New(rand.NewPCG(17, 18)))
	ref2 := loadProm(ctx, t, edgeRef(overwrite(samples, late)))
	for _, f := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(f.String(), func(t *testing.T) {
			s := openStack(t, stackOptions{format: f})
			loadEdges(ctx, t, s, rand.New(rand.NewPCG(13, 14)), samples)
			compareEdges(t, ref, s, queries)
			compareParallel(t, ref, s, queries)
			for _, x := range late {
				mustOK(t, s.appendPoint(ctx, x.l, x.p))
			}
			mustOK(t, s.commit())
			mustOK(t, s.flushBefore(ctx, edgeH0+3_600_000))
			var some []edgeQuery // every fifth query: enough rows read again
			for i := 0; i < len(queries); i += 5 {
				some = append(some, queries[i])
			}
			compareEdges(t, ref2, s, some)
		})
	}
}

// genLateEdges adds a point between two of the grid, ints and late
// series' points in every hour.
func genLateEdges(r *rand.Rand) []edgeSample {
	var out []edgeSample
	for h := range int64(4) {
		for _, s := range []string{"grid", "ints", "late"} {
			l := edgeLabels(s, map[string]string{"grid": "f", "ints": "i", "late": "f"}[s])
			t := edgeH0 + h*3_600_000 + r.Int64N(3_599_000)/5_000*5_000 + 2_500
			p := series.Float64Point(t, r.NormFloat64())
			if s == "ints" {
				p = series.IntPoint(t, r.Int64N(1<<55))
			}
			out = append(out, edgeSample{l: l, p: p, late: true})
		}
	}
	for t := edgeH0 + 2*3_600_000; t < edgeH0+4*3_600_000; t += 7 * 15_000 {
		out = append(out, edgeSample{l: edgeLabels("grid", "f"), p: series.Float64Point(t, r.NormFloat64()), late: true})
	}
	return out
}

// overwrite returns samples with late added, a late sample replacing the
// one of its series at its time.
func overwrite(samples, late []edgeSample) []edgeSample {
	type key struct {
		l string
		t int64
	}
	at := make(map[key]int, len(samples))
	out := slices.Clone(samples)
	for i, x := range out {
		at[key{x.l.String(), x.p.T}] = i
	}
	for _, x := range late {
		if i, ok := at[key{x.l.String(), x.p.T}]; ok {
			out[i] = x
		} else {
			out = append(out, x)
		}
	}
	return out
}

func compareEdges(t *testing.T, ref storage.Queryable, s *stack, queries []edgeQuery) {
	ctx := context.Background()
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	failures, points := 0, 0
	win0 := s.q.Stats().WindowSelects
	for _, q := range queries {
		want := edgeRun(ctx, plain, ref, q)
		if want.err != "" && failures < 40 {
			failures++
			t.Errorf("%s: Prometheus fails: %s", q, want.err)
		}
		for pass, e := range []struct {
			name string
			eng  prom.QueryEngine
		}{{"pushdown", eng}, {"plain", plain}} {
			before := s.q.Stats().PushdownSelects
			have := edgeRun(ctx, e.eng, s.q, q)
			eq := identical
			if !q.exact {
				eq = close12
			}
			if msg := diffWith(want, have, eq); msg != "" && failures < 40 {
				failures++
				t.Errorf("%s (%s): %s", q, e.name, msg)
			}
			if pushed := s.q.Stats().PushdownSelects > before; pass == 0 && pushed != q.wantPushed && failures < 40 {
				failures++
				t.Errorf("%s: pushed down %v, want %v", q, pushed, q.wantPushed)
			}
		}
		for _, ser := range want.series {
			points += len(ser.t)
		}
	}
	if points < 10*len(queries) {
		t.Errorf("%d points compared, want more", points)
	}
	// Some calls were replaced by their selector (rewriteWindows).
	if win := s.q.Stats().WindowSelects - win0; win == 0 {
		t.Errorf("no window selector: the engine called every function")
	} else {
		t.Logf("%d window selectors", win)
	}
	if st := s.reader.Stats(); st.CacheHits == 0 {
		t.Errorf("reader stats %+v: no row cache hit", st)
	}
	t.Logf("%d queries, %d points compared", len(queries), points)
}

// close12 reports whether a and b are equal within 1e-12 relative.
func close12(a, b float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

func edgeRun(ctx context.Context, eng prom.QueryEngine, q storage.Queryable, eq edgeQuery) normResult {
	if eq.step == 0 {
		return instant(ctx, eng, q, eq.expr, eq.start)
	}
	return rangeStep(ctx, eng, q, eq.expr, eq.start, eq.end, eq.step)
}

var edgeRandom = flag.Int("promql.edge.random", 300, "random pushed-down queries TestPushdownEdges compares (long runs: 5000)")

// randomEdgeQueries draws queries with odd ranges, steps of at least the
// range (or instants), offsets of either sign and @ times, anywhere in
// and around the edge data.
func randomEdgeQueries(r *rand.Rand, n int) []edgeQuery {
	funcs := []string{"avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "last_over_time", "present_over_time",
		"count_over_time"}
	sels := []string{`edge`, `edge{s=~"ints|mixed"}`, `edge{s="special"}`, `edge{s!~"grid|kahan"}`,
		`{__name__=~"edge.*", s=~"b.|grid|ints"}`, `{__name__=~"edge.*"}`}
	const span = 4*3_600_000 + 10*60_000
	out := make([]edgeQuery, 0, n)
	for range n {
		rng := time.Duration(1+r.Int64N(2*3_600_000)) * time.Millisecond
		if r.IntN(3) == 0 { // a whole number of seconds: window ends on points
			rng = rng.Round(time.Second) + time.Second
		}
		mod := ""
		switch r.IntN(4) {
		case 0:
			mod = " offset " + model(time.Duration(r.Int64N(3_600_000)-1_800_000)*time.Millisecond)
		case 1:
			mod = " @ " + edgeAt(r.Int64N(span)-5*60_000)
		}
		expr := fmt.Sprintf("%s(%s[%s]%s)", funcs[r.IntN(len(funcs))], sels[r.IntN(len(sels))], model(rng), mod)
		start := edgeH0 - 10*60_000 + r.Int64N(span)
		if r.IntN(2) == 0 {
			start -= start % 15_000 // on a point
		}
		q := edgeQuery{expr: expr, start: start, end: start, exact: true, wantPushed: true}
		if r.IntN(3) > 0 {
			q.step = rng + time.Duration(r.Int64N(rng.Milliseconds()+1))*time.Millisecond
			q.end = start + r.Int64N(span)
		}
		out = append(out, q)
	}
	return out
}

// compareParallel runs every seventh query on four goroutines at once
// against the same Queryable (shared row cache, windows evaluated ahead on
// their own goroutines) and compares each with Prometheus's answer.
func compareParallel(t *testing.T, ref storage.Queryable, s *stack, queries []edgeQuery) {
	ctx := context.Background()
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	var some []edgeQuery
	var want []normResult
	for i := 0; i < len(queries); i += 7 {
		some = append(some, queries[i])
		want = append(want, edgeRun(ctx, plain, ref, queries[i]))
	}
	const workers = 4
	diffs := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(some)*2; i += workers {
				q := some[i%len(some)]
				have := edgeRun(ctx, eng, s.q, q)
				eq := identical
				if !q.exact {
					eq = close12
				}
				if msg := diffWith(want[i%len(some)], have, eq); msg != "" {
					diffs[w] = append(diffs[w], fmt.Sprintf("%s: %s", q, msg))
				}
			}
		})
	}
	wg.Wait()
	for _, d := range slices.Concat(diffs...)[:min(20, len(slices.Concat(diffs...)))] {
		t.Errorf("parallel: %s", d)
	}
}
