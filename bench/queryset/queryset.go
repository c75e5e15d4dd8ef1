package queryset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
)

// Query is one entry of the set.
type Query struct {
	// Name identifies the query.
	Name string
	// Shape is the dataset it reads.
	Shape gen.Shape
	// Range is the span, ending at End.
	Range time.Duration
	// Step is the PromQL step and the OpenTSDB downsample interval (0: raw).
	Step time.Duration
	// PromQL is the expressions, run one after the other.
	PromQL []string
	// OpenTSDB is the sub-queries of the /api/query body.
	OpenTSDB []SubQuery

	spec spec // how it was built, for Varied
}

// spec is how a query of the set is built from the hosts it names.
type spec struct {
	metrics []string
	tmpl    string // PromQL: %s is the metric, {hosts} the host matcher
	agg, ds string // OpenTSDB aggregator and downsampler
	hosts   int    // hosts named; 0: every host, grouped by host
	groupBy bool   // OpenTSDB: a series per host named
	// tsbs: one PromQL expression over every metric, %s the whole
	// selector, as TSBS's VictoriaMetrics generator writes it (tsbsSelector).
	tsbs bool
}

// build makes the query sp describes over the dataset's first sp.hosts
// hosts.
func build(name string, shape gen.Shape, rng, step time.Duration, sp spec) Query {
	return Query{Name: name, Shape: shape, Range: rng, Step: step, spec: sp}.over(hosts(sp.hosts, 1))
}

// over returns q with its expressions and sub-queries naming hs, as many
// hosts as its spec names.
func (q Query) over(hs []string) Query {
	sp := q.spec
	matcher := `hostname="` + strings.Join(hs, "") + `"`
	if len(hs) > 1 {
		matcher = `hostname=~"` + strings.Join(hs, "|") + `"`
	}
	q.PromQL = exprs(sp.metrics, strings.ReplaceAll(sp.tmpl, "{hosts}", matcher))
	if sp.tsbs {
		q.PromQL = []string{fmt.Sprintf(sp.tmpl, tsbsSelector(sp.metrics, hs))}
	}
	f := Filter{Type: "wildcard", Tagk: "hostname", Filter: "*", GroupBy: true}
	if sp.hosts > 0 {
		f = literalOr("hostname", hs, sp.groupBy)
	}
	q.OpenTSDB = subs(sp.metrics, sp.agg, sp.ds, f)
	return q
}

// Varied returns q as one run of a TSBS-style benchmark sends it: the
// hosts it names (as many as q names, distinct) drawn by rng from the
// dataset's nhosts, and its range ending at a second drawn by rng, with
// the whole range inside a dataset of span from gen.DefaultStart. Run
// after run, neither server's answer cache can serve it, and its windows
// rarely line up with the hour.
func (q *Query) Varied(rng *rand.Rand, nhosts int, span time.Duration) (*Query, time.Time) {
	hs := make([]string, 0, q.spec.hosts)
	seen := map[int]bool{}
	for len(hs) < min(q.spec.hosts, nhosts) {
		if h := rng.IntN(nhosts); !seen[h] {
			seen[h] = true
			hs = append(hs, fmt.Sprintf("host_%d", h))
		}
	}
	v := q.over(hs)
	first := gen.DefaultStart.Add(q.Range).Unix()
	last := End(span).Unix()
	end := last
	if last > first {
		end = first + rng.Int64N(last-first+1)
	}
	return &v, time.Unix(end, 0)
}

// tsbsSelector is the selector TSBS's VictoriaMetrics generator writes
// for metrics (cpu_ names) on hosts (none: every host): one metric by
// name, several as a regex of the name, hosts by hostname, quoted with
// single quotes as it quotes them.
func tsbsSelector(metrics, hosts []string) string {
	var hc string
	switch len(hosts) {
	case 0:
	case 1:
		hc = "hostname='" + hosts[0] + "'"
	default:
		hc = "hostname=~'" + strings.Join(hosts, "|") + "'"
	}
	if len(metrics) == 1 {
		return metrics[0] + "{" + hc + "}"
	}
	fields := make([]string, len(metrics))
	for i, m := range metrics {
		fields[i] = strings.TrimPrefix(m, "cpu_")
	}
	sel := "{__name__=~'cpu_(" + strings.Join(fields, "|") + ")'"
	if hc != "" {
		sel += ", " + hc
	}
	return sel + "}"
}

// SubQuery is one OpenTSDB 2.x sub-query.
type SubQuery struct {
	Metric     string   `json:"metric"`
	Aggregator string   `json:"aggregator"`
	Downsample string   `json:"downsample,omitempty"`
	Filters    []Filter `json:"filters"`
}

// Filter is an OpenTSDB 2.2+ tag filter.
type Filter struct {
	Type    string `json:"type"`
	Tagk    string `json:"tagk"`
	Filter  string `json:"filter"`
	GroupBy bool   `json:"groupBy"`
}

// Request is an /api/query body.
type Request struct {
	Start   int64      `json:"start"`
	End     int64      `json:"end"`
	Queries []SubQuery `json:"queries"`
}

// End returns the last timestamp of a dataset of span from gen.DefaultStart
// at the default 10 s interval.
func End(span time.Duration) time.Time {
	return gen.DefaultStart.Add(span - 10*time.Second)
}

// OpenTSDBBody returns the /api/query JSON body of q ending at end, times in
// milliseconds.
func (q *Query) OpenTSDBBody(end time.Time) []byte {
	b, _ := json.Marshal(Request{Start: end.Add(-q.Range).UnixMilli(), End: end.UnixMilli(), Queries: q.OpenTSDB})
	return b
}

func hosts(n, from int) []string {
	hs := make([]string, n)
	for i := range hs {
		hs[i] = fmt.Sprintf("host_%d", from+i)
	}
	return hs
}

func cpu(fields ...string) []string {
	ms := make([]string, len(fields))
	for i, f := range fields {
		ms[i] = "cpu_" + f
	}
	return ms
}

var allCPU = cpu("usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait",
	"usage_irq", "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice")

func subs(metrics []string, agg, ds string, fs ...Filter) []SubQuery {
	qs := make([]SubQuery, len(metrics))
	for i, m := range metrics {
		qs[i] = SubQuery{Metric: m, Aggregator: agg, Downsample: ds, Filters: fs}
	}
	return qs
}

// exprs instantiates a PromQL template (%s is the metric) for each metric.
func exprs(metrics []string, tmpl string) []string {
	es := make([]string, len(metrics))
	for i, m := range metrics {
		es[i] = fmt.Sprintf(tmpl, m)
	}
	return es
}

func literalOr(tagk string, vs []string, groupBy bool) Filter {
	return Filter{Type: "literal_or", Tagk: tagk, Filter: strings.Join(vs, "|"), GroupBy: groupBy}
}

// ByName returns the query of Set named name.
func ByName(name string) (*Query, error) {
	for i := range Set {
		if Set[i].Name == name {
			return &Set[i], nil
		}
	}
	return nil, fmt.Errorf("no query %q in bench/queryset", name)
}

// tsbsGroupByTime is TSBS's single-groupby-M-H-T: the maximum of m cpu
// metrics on h hosts, per minute over rng.
func tsbsGroupByTime(m, h int, rng time.Duration) Query {
	return build(fmt.Sprintf("single-groupby-%d-%d-%d", m, h, rng/time.Hour), gen.ShapeDevops, rng, time.Minute, spec{
		metrics: allCPU[:m], tmpl: `max(max_over_time(%s[1m])) by (__name__)`,
		agg: "max", ds: "1m-max", hosts: h, tsbs: true,
	})
}

// tsbsDoubleGroupBy is TSBS's double-groupby-m: the mean of m cpu metrics
// per host per hour over 12 hours.
func tsbsDoubleGroupBy(name string, m int) Query {
	return build("double-groupby-"+name, gen.ShapeDevops, 12*time.Hour, time.Hour, spec{
		metrics: allCPU[:m], tmpl: `avg(avg_over_time(%s[1h])) by (__name__, hostname)`,
		agg: "avg", ds: "1h-avg", tsbs: true,
	})
}

// tsbsMaxAll is TSBS's cpu-max-all-h: the maximum of every cpu metric of
// h hosts, per hour over 8 hours.
func tsbsMaxAll(h int) Query {
	return build(fmt.Sprintf("cpu-max-all-%d", h), gen.ShapeDevops, 8*time.Hour, time.Hour, spec{
		metrics: allCPU, tmpl: `max(max_over_time(%s[1h])) by (__name__)`,
		agg: "max", ds: "1h-max", hosts: h, tsbs: true,
	})
}

// TSBS is the devops query types of TSBS (github.com/timescale/tsbs)
// that its VictoriaMetrics generator writes, each one expression as that
// generator writes it, named as TSBS names them; its other types
// (lastpoint, high-cpu, groupby-orderby-limit) it does not write in
// PromQL. The queries name the dataset's first hosts: a run draws its
// own with Varied, as TSBS's generator draws them. Their OpenTSDB
// sub-queries are the Set's kind, one per metric.
var TSBS = []Query{
	tsbsGroupByTime(1, 1, time.Hour), tsbsGroupByTime(1, 1, 12*time.Hour), tsbsGroupByTime(1, 8, time.Hour),
	tsbsGroupByTime(5, 1, time.Hour), tsbsGroupByTime(5, 1, 12*time.Hour), tsbsGroupByTime(5, 8, time.Hour),
	tsbsMaxAll(1), tsbsMaxAll(8),
	tsbsDoubleGroupBy("1", 1), tsbsDoubleGroupBy("5", 5), tsbsDoubleGroupBy("all", 10),
}

// Set is the query set.
var Set = []Query{
	build("single-1h", gen.ShapeDevops, time.Hour, time.Minute, spec{
		metrics: allCPU[:1], tmpl: `max(max_over_time(%s{{hosts}}[1m])) by (__name__)`,
		agg: "max", ds: "1m-max", hosts: 1,
	}),
	build("single-5-12h", gen.ShapeDevops, 12*time.Hour, time.Minute, spec{
		metrics: allCPU[:5], tmpl: `max(max_over_time(%s{{hosts}}[1m])) by (__name__)`,
		agg: "max", ds: "1m-max", hosts: 1,
	}),
	build("groupby-12h", gen.ShapeDevops, 12*time.Hour, time.Hour, spec{
		metrics: allCPU[:1], tmpl: `avg(avg_over_time(%s[1h])) by (__name__, hostname)`,
		agg: "avg", ds: "1h-avg",
	}),
	build("max-all-8", gen.ShapeDevops, 8*time.Hour, time.Hour, spec{
		metrics: allCPU, tmpl: `max(max_over_time(%s{{hosts}}[1h])) by (__name__)`,
		agg: "max", ds: "1h-max", hosts: 8,
	}),
	build("highcard-10", gen.ShapeHighCard, time.Hour, time.Minute, spec{
		metrics: allCPU[:1], tmpl: `max_over_time(%s{{hosts}}[1m])`,
		agg: "max", ds: "1m-max", hosts: 10, groupBy: true,
	}),
}
