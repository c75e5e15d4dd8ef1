package expr

import (
	"context"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
)

// set is one result series of a metric or an expression: its values as
// floats by time.
type set struct {
	metrics []string          // sorted distinct metric names behind it
	tags    map[string]string // tags shared by everything behind it
	aggTags []string          // tag keys aggregated away, sorted
	qtags   []string          // group-by tag keys of the queries behind it
	ts      []int64           // sorted, ms
	vs      []float64
}

// at returns the value at t and whether there is one.
func (s *set) at(t int64) (float64, bool) {
	i, ok := slices.BinarySearch(s.ts, t)
	if !ok {
		return 0, false
	}
	return s.vs[i], true
}

// Result is an executed expression query, ready for AppendJSON.
type Result struct {
	q          *Query
	start, end int64
	outputs    []outputSets
}

type outputSets struct {
	out  Output
	sets []*set
}

// Run executes q on e: each metric as a sub-query of an /api/query (one
// query per distinct timeOffset), then the expressions over the results.
func Run(ctx context.Context, e *opentsdb.Engine, q *Query) (*Result, error) {
	r := &runner{q: q, e: e, metrics: map[string][]*set{}, exprs: map[string][]*set{}, busy: map[string]bool{}}
	if err := r.times(); err != nil {
		return nil, err
	}
	if err := r.readMetrics(ctx); err != nil {
		return nil, err
	}
	res := &Result{q: q, start: r.start, end: r.end}
	for _, o := range r.outputs() {
		sets, err := r.resolve(o.ID)
		if err != nil {
			return nil, err
		}
		res.outputs = append(res.outputs, outputSets{out: o, sets: sets})
	}
	return res, nil
}

type runner struct {
	q          *Query
	e          *opentsdb.Engine
	start, end int64
	metrics    map[string][]*set
	exprs      map[string][]*set
	busy       map[string]bool // expressions being evaluated (cycle check)
}

// times parses the range as /api/query would.
func (r *runner) times() error {
	o := r.e.Options()
	now := o.Now().UnixMilli()
	var err error
	if r.start, err = tsquery.ParseTime(r.q.Time.Start, r.q.Time.Timezone, now, o.Location); err != nil {
		return err
	}
	r.end = now
	if r.q.Time.End != "" {
		if r.end, err = tsquery.ParseTime(r.q.Time.End, r.q.Time.Timezone, now, o.Location); err != nil {
			return err
		}
	}
	if r.end < r.start {
		return bad("End time [%d] must be greater than the start time [%d]", r.end, r.start)
	}
	return nil
}

// outputs are the requested outputs, else every expression, else every
// metric.
func (r *runner) outputs() []Output {
	if len(r.q.Outputs) > 0 {
		return r.q.Outputs
	}
	var out []Output
	for _, e := range r.q.Expressions {
		out = append(out, Output{ID: e.ID})
	}
	if len(out) == 0 {
		for _, m := range r.q.Metrics {
			out = append(out, Output{ID: m.ID})
		}
	}
	return out
}

// readMetrics runs one /api/query per distinct time offset.
func (r *runner) readMetrics(ctx context.Context) error {
	byOffset := map[int64][]int{}
	var offsets []int64
	for i, m := range r.q.Metrics {
		off, _ := parseOffset(m.TimeOffset)
		if _, ok := byOffset[off]; !ok {
			offsets = append(offsets, off)
		}
		byOffset[off] = append(byOffset[off], i)
	}
	for _, off := range offsets {
		if err := r.readOffset(ctx, off, byOffset[off]); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) readOffset(ctx context.Context, off int64, idx []int) error {
	tq := &tsquery.TSQuery{Start: msString(r.start - off), End: msString(r.end - off), MsResolution: true, NoAnnotations: true}
	subs := map[*tsquery.SubQuery]string{}
	for _, i := range idx {
		sq, err := r.subQuery(&r.q.Metrics[i])
		if err != nil {
			return err
		}
		tq.Queries = append(tq.Queries, sq)
		subs[sq] = r.q.Metrics[i].ID
		r.metrics[r.q.Metrics[i].ID] = []*set{}
	}
	res, err := r.e.Execute(ctx, tq)
	if err != nil {
		return err
	}
	defer res.Release()
	for i := range res.Groups {
		g := &res.Groups[i]
		id := subs[g.Sub]
		r.metrics[id] = append(r.metrics[id], groupSet(g, off))
	}
	return nil
}

// msString writes ms in the "<n>ms" form ParseTime reads as ms.
func msString(ms int64) string { return strconv.FormatInt(max(ms, 0), 10) + "ms" }

// subQuery is metric m as an /api/query sub-query with the common time
// settings.
func (r *runner) subQuery(m *Metric) (*tsquery.SubQuery, error) {
	sq := tsquery.NewSubQuery()
	sq.Metric, sq.Aggregator, sq.Rate = m.Metric, r.q.Time.Aggregator, r.q.Time.Rate
	if m.Aggregator != "" {
		sq.Aggregator = m.Aggregator
	}
	if ds := r.q.Time.Downsampler; ds != nil {
		sq.Downsample = ds.Interval + "-" + ds.Aggregator
		if fp := ds.FillPolicy; fp != nil && fp.Policy != "" && !strings.EqualFold(fp.Policy, "scalar") {
			sq.Downsample += "-" + strings.ToLower(fp.Policy)
		}
	}
	for _, f := range r.q.Filters {
		if f.ID != m.Filter {
			continue
		}
		for _, t := range f.Tags {
			nf, err := tsquery.NewFilter(t.Type, t.Tagk, t.Filter, t.GroupBy)
			if err != nil {
				return nil, err
			}
			sq.Filters = append(sq.Filters, nf)
		}
	}
	return sq, nil
}

// groupSet copies a result group, shifting its times by off.
func groupSet(g *opentsdb.Group, off int64) *set {
	s := &set{metrics: []string{g.Metric}, tags: map[string]string{}, aggTags: slices.Clone(g.AggregateTags),
		qtags: g.Sub.GroupByTagks()}
	sort.Strings(s.aggTags)
	for _, t := range g.Tags {
		s.tags[t.Key] = t.Value
	}
	for _, p := range g.Points {
		s.ts = append(s.ts, p.T+off)
		s.vs = append(s.vs, p.Float())
	}
	return s
}

// resolve returns the sets of a metric or expression id.
func (r *runner) resolve(id string) ([]*set, error) {
	if s, ok := r.metrics[id]; ok {
		return s, nil
	}
	if s, ok := r.exprs[id]; ok {
		return s, nil
	}
	if r.busy[id] {
		return nil, bad("Circular reference in expression %s", id)
	}
	r.busy[id] = true
	defer delete(r.busy, id)
	for i := range r.q.Expressions {
		if e := &r.q.Expressions[i]; e.ID == id {
			s, err := r.evaluate(e)
			r.exprs[id] = s
			return s, err
		}
	}
	return nil, bad("Output id not found: %s", id)
}

// fill returns the value a missing point of variable id takes.
func (r *runner) fill(id string, def *FillPolicy) float64 {
	fp := def
	for i := range r.q.Metrics {
		if r.q.Metrics[i].ID == id && r.q.Metrics[i].FillPolicy != nil {
			fp = r.q.Metrics[i].FillPolicy
		}
	}
	return fillValue(fp)
}

// fillValue is a policy's value: zero 0, scalar its value, else NaN.
func fillValue(fp *FillPolicy) float64 {
	if fp == nil {
		return math.NaN()
	}
	switch strings.ToLower(fp.Policy) {
	case "zero":
		return 0
	case "scalar":
		return fp.Value
	}
	return math.NaN()
}
