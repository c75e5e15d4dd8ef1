package promql_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
)

// refSelectors cover every matcher type, on __name__ and on tags, absent
// labels, unknown labels and an unknown metric.
var refSelectors = []string{
	`gauge_a`,
	`gauge_a{job="api"}`,
	`gauge_a{job!="api"}`,
	`gauge_a{job=~"api|db"}`,
	`gauge_a{job!~"a.*"}`,
	`gauge_a{env=""}`,
	`gauge_a{env!=""}`,
	`gauge_a{env=~"prod|"}`,
	`gauge_a{env!~"d.*"}`,
	`gauge_a{nolabel="x"}`,
	`gauge_a{nolabel!="x", instance="2"}`,
	`{__name__=~"gauge_.*"}`,
	`{__name__=~"gauge_.", instance=~"[01]"}`,
	`{__name__!="gauge_a", job="db"}`,
	`{__name__!~"gauge.*", job=~".+"}`,
	`{job="web"}`,
	`{__name__=~".*_b"}`,
	`gauge_c`,
	`gauge_c{env="dev"}`,
	`nonexistent_metric`,
	`counter_b{instance!~"1|2"}`,
}

// refExpressions returns the compared expressions: the selectors, then
// range functions, aggregations, binary operators with vector matching,
// offset, @ and subqueries.
func refExpressions() []string {
	out := slices.Clone(refSelectors)
	for _, s := range refSelectors[:9] {
		out = append(out, `count_over_time(`+s+`[7m])`)
	}
	out = append(out,
		`rate(counter_b[5m])`, `irate(counter_b[5m])`, `increase(counter_b[1h])`, `resets(counter_b[30m])`,
		`rate(counter_b{job="db"}[20m])`, `increase(counter_b{env!=""}[3m])`,
		`delta(gauge_a[10m])`, `idelta(gauge_a[2m])`, `deriv(gauge_a[15m])`, `predict_linear(gauge_a[30m], 600)`,
		`changes(gauge_c[1h])`, `avg_over_time(gauge_a[10m])`, `min_over_time(gauge_a[10m])`,
		`max_over_time(gauge_c[20m])`, `sum_over_time(gauge_a[5m])`, `last_over_time(gauge_c[15m])`,
		`quantile_over_time(0.9, gauge_a[30m])`, `stddev_over_time(gauge_a[10m])`,
		`stdvar_over_time(counter_b[10m])`, `present_over_time(gauge_c[5m])`, `absent_over_time(gauge_c{job="api"}[10m])`,
		`absent(nonexistent_metric)`, `absent(gauge_a{job="api"})`, `timestamp(gauge_c)`,
		`sum(gauge_a)`, `sum by (job) (gauge_a)`, `sum without (instance) (gauge_a)`, `avg by (env) (gauge_a)`,
		`max by (job, env) (gauge_c)`, `min without (job) (counter_b)`, `count by (instance) ({__name__=~"gauge_.*"})`,
		`count without (job, instance) (gauge_a)`, `topk(2, gauge_a)`, `bottomk by (job) (1, gauge_a)`,
		`quantile by (job) (0.75, gauge_a)`, `stddev(gauge_a)`, `stdvar by (instance) (gauge_a)`, `group by (env) (gauge_a)`,
		`count_values("bucket", floor(gauge_c))`, `sum by (job) (rate(counter_b[5m]))`,
		`avg without (instance) (rate(counter_b[10m]))`, `max(increase(counter_b[30m]))`,
		`gauge_a + gauge_a`, `gauge_a - on (job, instance) counter_b`, `gauge_a / ignoring (env) gauge_c`,
		`gauge_a * on (job, instance) group_left (env) gauge_c`, `counter_b / on (job) group_left sum by (job) (counter_b)`,
		`gauge_a > 50`, `gauge_a > bool 50`, `gauge_a <= on (job, instance) counter_b`, `gauge_a and gauge_c`,
		`gauge_a and on (job) gauge_c{env="dev"}`, `gauge_a or gauge_c`, `gauge_c or on (job, instance) gauge_a`,
		`gauge_a unless gauge_c`, `gauge_a unless on (instance) counter_b{job="web"}`, `gauge_a == gauge_a`,
		`2 * gauge_a - 1`, `-gauge_a`, `abs(gauge_a) ^ 0.5`, `gauge_a % 7`, `sum(gauge_a) / count(gauge_a)`,
		`gauge_a offset 10m`, `gauge_a offset -5m`, `rate(counter_b[5m] offset 1h)`, `sum(gauge_a offset 30m) by (job)`,
		`increase(counter_b[10m] offset 90m)`, `gauge_a - gauge_a offset 5m`,
		`gauge_a @ `+at(90*60_000), `rate(counter_b[10m] @ `+at(3*3_600_000)+`)`, `gauge_c @ end()`,
		`gauge_a @ start()`, `sum by (job) (gauge_a @ `+at(5*3_600_000)+`)`, `gauge_a - gauge_a @ `+at(0),
		`max_over_time(rate(counter_b[5m])[30m:1m])`, `avg_over_time(gauge_a[1h:5m])`, `min_over_time(sum by (job) (gauge_a)[20m:])`,
		`deriv(sum(gauge_a)[30m:2m])`, `sum_over_time(gauge_c[10m:30s] offset 5m)`, `max_over_time(gauge_a[15m:1m] @ `+at(2*3_600_000)+`)`,
		`rate(counter_b[5m:30s])`, `quantile_over_time(0.5, (gauge_a > 40)[30m:1m])`,
		`clamp(gauge_a, 0, 80)`, `round(gauge_a, 5)`, `exp(gauge_c / 10)`, `ln(abs(gauge_a) + 1)`,
		`sort_desc(sum by (job) (gauge_a))`, `label_replace(gauge_a, "j", "$1", "job", "(.)pi")`,
		`label_join(gauge_c, "ji", "-", "job", "instance")`, `histogram_quantile(0.9, gauge_a)`,
		`vector(1) + on () group_left sum(gauge_a)`, `scalar(sum(gauge_a)) * gauge_c`, `time() - timestamp(gauge_a)`,
		`day_of_week(timestamp(gauge_c))`, `hour(timestamp(gauge_a))`,
	)
	return out
}

// at formats refStart+ms as an @ time in seconds.
func at(ms int64) string {
	return strconv.FormatFloat(float64(refStart+ms)/1000, 'f', 3, 64)
}

// normSeries is one series of a result, in a comparable form.
type normSeries struct {
	labels string
	t      []int64
	v      []float64
}

// normResult is a query result copied out of the engine's buffers.
type normResult struct {
	err    string
	series []normSeries
}

func normalize(r *prom.Result) normResult {
	if r.Err != nil {
		return normResult{err: r.Err.Error()}
	}
	var out []normSeries
	switch v := r.Value.(type) {
	case prom.Vector:
		for _, s := range v {
			out = append(out, normSeries{labels: s.Metric.String(), t: []int64{s.T}, v: []float64{s.F}})
		}
	case prom.Matrix:
		for _, s := range v {
			ns := normSeries{labels: s.Metric.String()}
			for _, p := range s.Floats {
				ns.t, ns.v = append(ns.t, p.T), append(ns.v, p.F)
			}
			out = append(out, ns)
		}
	case prom.Scalar:
		out = append(out, normSeries{labels: "scalar", t: []int64{v.T}, v: []float64{v.V}})
	case prom.String:
		out = append(out, normSeries{labels: "string " + v.V, t: []int64{v.T}})
	default:
		return normResult{err: fmt.Sprintf("unexpected value %T", r.Value)}
	}
	slices.SortFunc(out, func(a, b normSeries) int { return cmp.Compare(a.labels, b.labels) })
	return normResult{series: out}
}

// close reports whether a and b are equal within 1e-9 relative.
func closeTo(a, b float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// identical reports whether a and b have the same bits, or are both NaN.
func identical(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// diffResults returns "" when the results are equal within 1e-9
// relative, or the first difference.
func diffResults(want, have normResult) string { return diffWith(want, have, closeTo) }

// diffWith is diffResults with eq deciding whether two values are equal.
func diffWith(want, have normResult, eq func(a, b float64) bool) string {
	if want.err != have.err {
		return fmt.Sprintf("error %q, want %q", have.err, want.err)
	}
	if len(want.series) != len(have.series) {
		return fmt.Sprintf("%d series, want %d:\nhave %s\nwant %s", len(have.series), len(want.series),
			seriesNames(have), seriesNames(want))
	}
	for i, w := range want.series {
		h := have.series[i]
		if w.labels != h.labels || len(w.t) != len(h.t) {
			return fmt.Sprintf("series %d: %s with %d points, want %s with %d", i, h.labels, len(h.t), w.labels, len(w.t))
		}
		for j := range w.t {
			if w.t[j] != h.t[j] || !eq(w.v[j], h.v[j]) {
				return fmt.Sprintf("%s point %d: %v@%d, want %v@%d", w.labels, j, h.v[j], h.t[j], w.v[j], w.t[j])
			}
		}
	}
	return ""
}

func seriesNames(r normResult) string {
	var b strings.Builder
	for _, s := range r.series {
		b.WriteString(s.labels + " ")
	}
	return b.String()
}

// compareLabels compares label names and values, with and without
// matchers, over the whole range.
func compareLabels(t *testing.T, ref, got storage.Queryable) {
	ctx := context.Background()
	rq, err := ref.Querier(refStart, refEnd)
	mustOK(t, err)
	defer rq.Close()
	gq, err := got.Querier(refStart, refEnd)
	mustOK(t, err)
	defer gq.Close()
	sets := [][]*labels.Matcher{nil,
		{labels.MustNewMatcher(labels.MatchEqual, "__name__", "gauge_c")},
		{labels.MustNewMatcher(labels.MatchRegexp, "job", "a.*|w.*"), labels.MustNewMatcher(labels.MatchNotEqual, "env", "")},
		{labels.MustNewMatcher(labels.MatchNotRegexp, "__name__", "gauge.*")},
	}
	for _, ms := range sets {
		wn, _, err := rq.LabelNames(ctx, nil, ms...)
		mustOK(t, err)
		hn, _, err := gq.LabelNames(ctx, nil, ms...)
		mustOK(t, err)
		if !slices.Equal(wn, hn) {
			t.Errorf("LabelNames(%v) = %q, want %q", ms, hn, wn)
		}
		for _, name := range append(wn, "nolabel") {
			wv, _, err := rq.LabelValues(ctx, name, nil, ms...)
			mustOK(t, err)
			hv, _, err := gq.LabelValues(ctx, name, nil, ms...)
			mustOK(t, err)
			if !slices.Equal(wv, hv) {
				t.Errorf("LabelValues(%s, %v) = %q, want %q", name, ms, hv, wv)
			}
		}
	}
}
