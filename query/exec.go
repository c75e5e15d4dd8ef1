package query

import (
	"context"
	"slices"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// member is one series read for a sub-query: its points and notes in the
// window.
type member struct {
	s     index.Series
	pts   []series.Point
	bk    *agg.Buckets // with the fused read: the series downsampled, pts nil
	notes []read.Note
	tags  []tagPair
	// points is false for a series read only for its notes: OpenTSDB's
	// SpanGroup.add keeps an empty span's annotations, not the span, so
	// its tags and TSUID are not the group's.
	points bool
}

// executor runs one query at a time, keeping its buffers between queries
// (the Engine pools executors).
type executor struct {
	e       *Engine
	members []member
	byKey   map[string][]int // group key -> member indexes
	keys    []string
	iters   []series.SliceIterator
	inputs  []series.Iterator
	bks     []*agg.Buckets
	tagSlab []tagPair // every member's tags
	common  []tagPair // describe's buffers
	tagKeys []uid.ID
	gb      *agg.GroupBy
	fused   fusedRead
}

// run executes a validated query.
func (x *executor) run(ctx context.Context, q *tsquery.TSQuery) (*Result, error) {
	res := getResult(q)
	defer x.reset()
	budget := read.NewBudget(x.e.opts.Limits)
	for _, sq := range q.Queries {
		if err := x.runSub(ctx, q, sq, budget, res); err != nil {
			res.Release()
			return nil, err
		}
	}
	if q.GlobalAnnotations && !q.NoAnnotations {
		if err := x.globalNotes(ctx, q, res); err != nil {
			res.Release()
			return nil, err
		}
	}
	res.finish()
	return res, nil
}

// reset drops the references to the query's points, so a pooled
// executor does not keep them alive.
func (x *executor) reset() {
	clear(x.members)
	clear(x.iters)
	clear(x.inputs)
	clear(x.bks)
	x.members, x.inputs, x.bks = x.members[:0], x.inputs[:0], x.bks[:0]
	x.fused.reset()
	// x.gb's streams point at x.iters, now empty.
}

// runSub resolves, reads, groups and aggregates one sub-query, appending
// its groups to res.
func (x *executor) runSub(ctx context.Context, q *tsquery.TSQuery, sq *tsquery.SubQuery, budget *read.Budget, res *Result) error {
	spec := q.Spec(sq)
	st := stageOf(res, sq.Index, budget) // showStats/showSummary timings, else no-ops
	// OpenTSDB scans rows up to the window's end, excluded; agg's window
	// is inclusive, so the point at its very end is not read.
	sel, err := x.resolve(ctx, sq, spec.Start, spec.End-1)
	if err != nil {
		return err
	}
	st.lap(resolveTime)
	read := x.read
	if agg.PushSpec(&spec) && !x.e.noFuse {
		read = x.readFused
	}
	if err := read(ctx, sel, spec, budget, !q.NoAnnotations); err != nil {
		return err
	}
	st.readDone()
	if q.Delete {
		if err := x.deleteRead(ctx, q); err != nil {
			return err
		}
		st.restart() // the delete is none of the stats' steps
	}
	x.group(sel, sq.Agg.IsNone())
	st.lap(groupTime)
	for _, key := range x.keys {
		if err := x.aggregate(ctx, spec, sq, sel, x.byKey[key], budget, res); err != nil {
			return err
		}
		st.groupDone()
	}
	return nil
}

// read fetches the selected series' points and notes in the window into
// x.members (only series that have some).
func (x *executor) read(ctx context.Context, sel *selection, spec agg.Spec, budget *read.Budget, notes bool) error {
	clear(x.members)
	x.members = x.members[:0]
	rsel := read.Selection{Series: sel.series, Start: spec.Start, End: spec.End - 1,
		MetricSeries: sel.metricSeries, Budget: budget, Notes: notes}
	return x.e.opts.Reader.Read(ctx, rsel, func(s index.Series, pts []series.Point, ns []read.Note) error {
		x.members = append(x.members, member{s: s, pts: pts, notes: ns, points: len(pts) > 0})
		return nil
	})
}

// deleteRead deletes the stored points of the series just read in the
// query range.
func (x *executor) deleteRead(ctx context.Context, q *tsquery.TSQuery) error {
	tsuids := make([]string, len(x.members))
	for i := range x.members {
		tsuids[i] = x.members[i].s.TSUID
	}
	return x.e.opts.Deleter.DeleteRange(ctx, tsuids, q.StartTime, q.EndTime)
}

// groupBy sets x.gb up over the members idx.
func (x *executor) groupBy(spec agg.Spec, idx []int) {
	if x.members[idx[0]].bk != nil {
		x.bks = x.bks[:0]
		for _, m := range idx {
			x.bks = append(x.bks, x.members[m].bk)
		}
		x.gb = agg.NewGroupByBuckets(x.gb, spec, x.bks)
		return
	}
	x.iters = slices.Grow(x.iters[:0], len(idx))[:len(idx)]
	x.inputs = x.inputs[:0]
	for i, m := range idx {
		x.inputs = append(x.inputs, series.NewSliceIterator(&x.iters[i], x.members[m].pts))
	}
	x.gb = agg.NewGroupBy(x.gb, spec, x.inputs)
}

// outputCheck is how many output points aggregate emits between budget
// and context checks.
const outputCheck = 4096

// aggregate runs the group-by over the members idx and appends the group.
// Output points count against the budget too: a fill policy over a tiny
// interval makes points from nothing.
func (x *executor) aggregate(ctx context.Context, spec agg.Spec, sq *tsquery.SubQuery, sel *selection, idx []int, budget *read.Budget, res *Result) error {
	x.groupBy(spec, idx)
	g := res.addGroup(sq, sel.metric)
	for n := 1; x.gb.Next(); n++ {
		res.points = append(res.points, x.gb.At())
		if n%outputCheck == 0 {
			if err := budget.AddPoints(outputCheck); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
		}
	}
	if err := x.gb.Err(); err != nil {
		return err
	}
	res.endGroup(g)
	return x.describe(ctx, g, idx, res)
}
