package opentsdb

import (
	"context"
	"slices"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// member is one series read for a sub-query: its points and notes in the
// window.
type member struct {
	s     index.Series
	pts   []series.Point
	bk    *agg.Buckets // with the fused read: the series downsampled, pts nil
	hists []histPoint  // a histogram sub-query's histograms (histogram.go)
	notes []read.Note
	tags  []tagPair
	// points is false for a series read only for its notes: OpenTSDB's
	// SpanGroup.add keeps an empty span's annotations, not the span, so
	// its tags and TSUID are not the group's.
	points bool
	// lazy marks a series of a lazy read (lazy.go), whose points and
	// notes are read when its group is aggregated; fetch is its index in
	// the read's selection.
	lazy  bool
	fetch int
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
	rollup  rollupRead
	lazy    lazyRead
	sels    []*selection // the run's sub-queries, resolved
	rd      *read.Reader // the current sub-query's reader (reader)
}

// run is a query being executed a group at a time: Execute drives it to
// the end, a Stream one group per step.
type run struct {
	q      *tsquery.TSQuery
	budget *read.Budget
	// eager reads raw points with Read, every series of a sub-query at
	// once, where a lazy run fetches them group by group: a delete must
	// know every series read, and statistics time the read on its own.
	eager bool
	sub   int  // the sub-query being answered
	ready bool // its series are read (or fetched) and grouped
	key   int  // its next group in x.keys
	spec  agg.Spec
	st    stage
	out   int64 // points output so far (Options.MaxOutputPoints)
}

// start resolves every sub-query of a validated q (so a bad name is
// refused before any group is answered), checks the output bound and
// reads the global annotations.
func (x *executor) start(ctx context.Context, q *tsquery.TSQuery, res *Result) (run, error) {
	r := run{q: q, budget: read.NewBudget(x.e.opts.Limits), eager: q.Delete || q.ShowStats || q.ShowSummary || x.e.eager}
	x.sels = x.sels[:0]
	for _, sq := range q.Queries {
		spec := q.Spec(sq)
		st := stageOf(res, sq.Index, r.budget)
		// OpenTSDB scans rows up to the window's end, excluded; agg's
		// window is inclusive, so the point at its very end is not read.
		sel, err := x.resolve(ctx, sq, spec.Start, spec.End-1)
		if err != nil {
			return r, err
		}
		st.lap(resolveTime)
		x.sels = append(x.sels, sel)
	}
	if err := x.checkOutputBound(q); err != nil {
		return r, err
	}
	if q.GlobalAnnotations && !q.NoAnnotations {
		if err := x.globalNotes(ctx, q, res); err != nil {
			return r, err
		}
	}
	return r, nil
}

// next appends the run's next group to res; false once every sub-query
// is answered. Groups whose series turn out to have nothing in the
// window are skipped.
func (x *executor) next(ctx context.Context, r *run, res *Result) (bool, error) {
	for r.sub < len(r.q.Queries) {
		if !r.ready {
			if err := x.prepare(ctx, r, res); err != nil {
				return false, err
			}
		}
		for r.key < len(x.keys) {
			idx := x.byKey[x.keys[r.key]]
			r.key++
			ok, err := x.aggregate(ctx, r, idx, res)
			if err != nil {
				return false, err
			}
			if ok {
				r.st.groupDone()
				return true, nil
			}
		}
		x.lazy.release()
		r.sub, r.ready, r.key = r.sub+1, false, 0
	}
	return false, nil
}

// prepare reads and groups the series of the run's current sub-query.
func (x *executor) prepare(ctx context.Context, r *run, res *Result) error {
	sq, sel := r.q.Queries[r.sub], x.sels[r.sub]
	r.spec = r.q.Spec(sq)
	r.st = stageOf(res, sq.Index, r.budget)
	x.rd = x.reader(r.q, sq)
	if isHistogram(sq) {
		return x.prepareHist(ctx, r, res, sq, sel)
	}
	served, table, err := x.readRollup(ctx, r.q, sq, sel, r.spec, r.budget)
	if !served && err == nil {
		table = x.rd.Table()
	}
	r.st.table(table)
	res.setTable(sq.Index, table)
	switch notes := !r.q.NoAnnotations; {
	case err != nil, served:
	case agg.PushSpec(&r.spec) && !x.e.noFuse:
		err = x.readFused(ctx, sel, r.spec, r.budget, notes)
	case r.eager:
		err = x.read(ctx, sel, r.spec, r.budget, notes)
	default:
		err = x.fetch(ctx, sel, r.spec, r.budget, notes)
	}
	if err != nil {
		return err
	}
	r.st.readDone()
	if r.q.Delete {
		if err := x.deleteRead(ctx, r.q); err != nil {
			return err
		}
		r.st.restart() // the delete is none of the stats' steps
	}
	x.group(sel, sq.Agg.IsNone())
	r.st.lap(groupTime)
	r.ready = true
	return nil
}

// reset drops the references to the query's points, so a pooled
// executor does not keep them alive.
func (x *executor) reset() {
	clear(x.members)
	clear(x.iters)
	clear(x.inputs)
	clear(x.bks)
	clear(x.sels)
	x.members, x.inputs, x.bks, x.sels = x.members[:0], x.inputs[:0], x.bks[:0], x.sels[:0]
	x.fused.reset()
	x.lazy.release()
	x.lazy.reset()
	// x.gb's streams point at x.iters, now empty.
}

// read fetches the selected series' points and notes in the window into
// x.members (only series that have some).
func (x *executor) read(ctx context.Context, sel *selection, spec agg.Spec, budget *read.Budget, notes bool) error {
	clear(x.members)
	x.members = x.members[:0]
	rsel := read.Selection{Series: sel.series, Start: spec.Start, End: spec.End - 1,
		MetricSeries: sel.metricSeries, Budget: budget, Notes: notes}
	return x.rd.Read(ctx, rsel, func(s index.Series, pts []series.Point, ns []read.Note) error {
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

// aggregate runs the group-by over the members idx and appends the group
// to res; false, with nothing appended, when a lazy read finds none of
// them has points or notes in the window. Output points count against the
// budget too, as a fill policy over a tiny interval makes points from
// nothing, and against Options.MaxOutputPoints.
func (x *executor) aggregate(ctx context.Context, r *run, idx []int, res *Result) (bool, error) {
	if isHistogram(r.q.Queries[r.sub]) {
		return x.aggregateHist(ctx, r, idx, res)
	}
	idx, err := x.load(ctx, r, idx)
	if err != nil || len(idx) == 0 {
		return false, err
	}
	x.groupBy(r.spec, idx)
	x.growPoints(res, idx)
	g := res.addGroup(r.q.Queries[r.sub], x.sels[r.sub].metric)
	n := 0
	if pts, ok := x.gb.AppendSingle(res.points); ok {
		n = len(pts) - len(res.points)
		res.points = pts
		if full := n - n%outputCheck; full > 0 {
			if err := x.checkOutput(ctx, r, full); err != nil {
				return false, err
			}
		}
	}
	for x.gb.Next() {
		res.points = append(res.points, x.gb.At())
		if n++; n%outputCheck == 0 {
			if err := x.checkOutput(ctx, r, outputCheck); err != nil {
				return false, err
			}
		}
	}
	if err := x.gb.Err(); err != nil {
		return false, err
	}
	r.out += int64(n % outputCheck)
	if err := x.checkOutputTotal(r); err != nil {
		return false, err
	}
	res.endGroup(g)
	return true, x.describe(ctx, g, idx, res)
}

// growPoints makes room in res for every group's points at the first
// group over Buckets (a rollup or fused read): the buckets already hold
// them, at most one output point each without a fill policy, so a first
// answer allocates its points once instead of doubling through the
// groups, at most maxKeptPoints.
func (x *executor) growPoints(res *Result, idx []int) {
	if len(res.points) != 0 || x.members[idx[0]].bk == nil {
		return
	}
	n := 0
	for i := range x.members {
		if bk := x.members[i].bk; bk != nil {
			n += bk.Len()
		}
	}
	res.points = slices.Grow(res.points, min(n, maxKeptPoints))
}

// checkOutput counts n more output points against the budget and the
// output limit, and checks the context.
func (x *executor) checkOutput(ctx context.Context, r *run, n int) error {
	if err := r.budget.AddPoints(n); err != nil {
		return err
	}
	r.out += int64(n)
	if err := x.checkOutputTotal(r); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// checkOutputTotal fails once the run has output more than
// Options.MaxOutputPoints.
func (x *executor) checkOutputTotal(r *run) error {
	if max := x.e.opts.MaxOutputPoints; max > 0 && r.out > max {
		return &OutputLimitError{Max: max}
	}
	return nil
}
