package queryset

import (
	"encoding/json"
	"fmt"
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

// Set is the query set.
var Set = []Query{
	{
		Name: "single-1h", Range: time.Hour, Step: time.Minute,
		PromQL:   exprs(allCPU[:1], `max(max_over_time(%s{hostname="host_1"}[1m])) by (__name__)`),
		OpenTSDB: subs(allCPU[:1], "max", "1m-max", literalOr("hostname", hosts(1, 1), false)),
	},
	{
		Name: "single-5-12h", Range: 12 * time.Hour, Step: time.Minute,
		PromQL:   exprs(allCPU[:5], `max(max_over_time(%s{hostname="host_1"}[1m])) by (__name__)`),
		OpenTSDB: subs(allCPU[:5], "max", "1m-max", literalOr("hostname", hosts(1, 1), false)),
	},
	{
		Name: "groupby-12h", Range: 12 * time.Hour, Step: time.Hour,
		PromQL:   exprs(allCPU[:1], `avg(avg_over_time(%s[1h])) by (__name__, hostname)`),
		OpenTSDB: subs(allCPU[:1], "avg", "1h-avg", Filter{Type: "wildcard", Tagk: "hostname", Filter: "*", GroupBy: true}),
	},
	{
		Name: "max-all-8", Range: 8 * time.Hour, Step: time.Hour,
		PromQL:   exprs(allCPU, `max(max_over_time(%s{hostname=~"`+strings.Join(hosts(8, 1), "|")+`"}[1h])) by (__name__)`),
		OpenTSDB: subs(allCPU, "max", "1h-max", literalOr("hostname", hosts(8, 1), false)),
	},
	{
		Name: "highcard-10", Shape: gen.ShapeHighCard, Range: time.Hour, Step: time.Minute,
		PromQL:   exprs(allCPU[:1], `max_over_time(%s{hostname=~"`+strings.Join(hosts(10, 1), "|")+`"}[1m])`),
		OpenTSDB: subs(allCPU[:1], "max", "1m-max", literalOr("hostname", hosts(10, 1), true)),
	},
}
