package opentsdb

import (
	"context"
	"sync"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
)

// Tag is a tag key and value by name.
type Tag struct{ Key, Value string }

// Group is one result series: the aggregate of the series of a sub-query
// that share their group-by tag values.
type Group struct {
	// Sub is the sub-query the group answers.
	Sub *tsquery.SubQuery
	// Metric is the metric name.
	Metric string
	// Tags are the tags every member has with the same value, by key.
	Tags []Tag
	// AggregateTags are the tag keys some member lacks or where members
	// differ, in tag key UID order.
	AggregateTags []string
	// TSUIDs are the members' TSUIDs in uppercase hex, sorted; only with
	// showTSUIDs.
	TSUIDs []string
	// Notes are the members' annotations in the range, by start time,
	// unless noAnnotations.
	Notes []annotation.Annotation
	// Points are the aggregated points in [start, end], in time order.
	// They alias the Result's slab.
	Points []series.Point

	off, end int // Points' bounds in the slab until finish
}

// Result is an executed query: its groups in output order. It is not safe
// for concurrent use.
type Result struct {
	q *tsquery.TSQuery
	// Groups are the result series, sub-queries in order, then groups.
	Groups []Group
	// GlobalNotes are the global annotations of the range, by start time,
	// with globalAnnotations.
	GlobalNotes []annotation.Annotation
	points      []series.Point
	stats       *queryStats // showStats or showSummary only
	tags        []Tag       // every group's Tags
	names       []string    // every group's AggregateTags
	tables      []string    // the table serving each sub-query, by index
}

var results = sync.Pool{New: func() any { return new(Result) }}

func getResult(q *tsquery.TSQuery) *Result {
	r := results.Get().(*Result)
	r.q = q
	r.startStats()
	return r
}

// setTable records the table serving sub-query i (its Index).
func (r *Result) setTable(i int, name string) {
	if i < 0 {
		return
	}
	for len(r.tables) <= i {
		r.tables = append(r.tables, "")
	}
	r.tables[i] = name
}

// Table returns the table that served sub-query i (its Index): the data
// table, a rollup table, or a pre-aggregation table. Empty before the
// sub-query is read.
func (r *Result) Table(i int) string {
	if i < 0 || i >= len(r.tables) {
		return ""
	}
	return r.tables[i]
}

// Query returns the executed query.
func (r *Result) Query() *tsquery.TSQuery { return r.q }

// maxKeptPoints is the most points a released Result keeps room for, and
// the most an executor makes room for ahead (growPoints).
const maxKeptPoints = 1 << 20

// Release returns r's buffers for reuse; r must not be used after.
func (r *Result) Release() {
	clear(r.Groups)
	clear(r.tags)
	clear(r.names)
	clear(r.tables)
	r.tags, r.names, r.tables = r.tags[:0], r.names[:0], r.tables[:0]
	r.Groups, r.GlobalNotes, r.points, r.q, r.stats = r.Groups[:0], nil, r.points[:0], nil, nil
	if cap(r.points) > maxKeptPoints {
		r.points = nil // one huge answer should not pin its slab forever
	}
	results.Put(r)
}

// dropGroups forgets the groups written so far, keeping the memory for
// the next ones (a Stream's).
func (r *Result) dropGroups() {
	clear(r.Groups)
	clear(r.tags)
	clear(r.names)
	r.Groups, r.points, r.tags, r.names = r.Groups[:0], r.points[:0], r.tags[:0], r.names[:0]
}

// addGroup starts a group whose points are appended to r.points next.
func (r *Result) addGroup(sq *tsquery.SubQuery, metric string) int {
	r.Groups = append(r.Groups, Group{Sub: sq, Metric: metric, off: len(r.points)})
	return len(r.Groups) - 1
}

// endGroup closes group g's points.
func (r *Result) endGroup(g int) { r.Groups[g].end = len(r.points) }

// finish points every group at its part of the slab, now that it no
// longer grows.
func (r *Result) finish() {
	for i := range r.Groups {
		g := &r.Groups[i]
		g.Points = r.points[g.off:g.end:g.end]
	}
}

// globalNotes adds the global annotations of the query range.
func (x *executor) globalNotes(ctx context.Context, q *tsquery.TSQuery, res *Result) error {
	st := x.e.opts.Annotations
	if st == nil {
		return nil
	}
	var err error
	res.GlobalNotes, err = st.Range(ctx, nil, q.StartTime, q.EndTime)
	return err
}
