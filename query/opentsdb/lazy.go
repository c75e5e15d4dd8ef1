package opentsdb

import (
	"context"
	"math"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
)

// lazyRead is a sub-query's raw read done a group at a time: Fetch keeps
// the selected rows still encoded (or nothing, under the per-series plan,
// whose iterators Get their rows), and a group's members are decoded only
// when the group is aggregated. A streamed answer then holds one group's
// points at a time, not the sub-query's.
type lazyRead struct {
	f     *read.Fetched
	it    *read.SeriesIterator
	slab  []series.Point // the current group's points
	idx   []int          // its members with points or notes
	spans [][2]int       // their points' bounds in slab, parallel to idx
}

// maxLazySlab is the largest group slab kept between queries, in points.
const maxLazySlab = 1 << 20

// lazyFetchBytes bounds what a lazy read's Fetch keeps for the scan plan
// (encoded stored cells, decoded head rows the row cache does not hold):
// a Stream keeps it while its client reads. Past it the read falls back
// to per-series Gets, each series' head rows read when its group is.
// Stored cells take about a byte a point, so a selection past it would
// answer more than the output limit's points anyway; head rows take 16.
const lazyFetchBytes = 8 << 20

// fetch prepares the lazy read of sel: x.members get every selected
// series, with no points yet. The series are charged to the budget now,
// as Read charges them.
func (x *executor) fetch(ctx context.Context, sel *selection, spec agg.Spec, budget *read.Budget, notes bool) error {
	clear(x.members)
	x.members = x.members[:0]
	if err := budget.AddSeries(len(sel.series)); err != nil {
		return err
	}
	rsel := read.Selection{Series: sel.series, Start: spec.Start, End: spec.End - 1,
		MetricSeries: sel.metricSeries, Budget: budget, Notes: notes, MaxFetchBytes: lazyFetchBytes}
	f, err := x.rd.Fetch(ctx, rsel)
	if err != nil {
		return err
	}
	x.lazy.f = f
	for i := range sel.series {
		x.members = append(x.members, member{s: sel.series[i], lazy: true, fetch: i})
	}
	return nil
}

// load reads the points and notes of the members idx of a lazy read and
// returns those that have some, as Read would have given them; members
// read already (eager and fused reads) are returned as they are.
func (x *executor) load(ctx context.Context, r *run, idx []int) ([]int, error) {
	if len(idx) == 0 || !x.members[idx[0]].lazy {
		return idx, nil
	}
	l := &x.lazy
	l.slab, l.idx, l.spans = l.slab[:0], l.idx[:0], l.spans[:0]
	for _, m := range idx {
		mb := &x.members[m]
		at := len(l.slab)
		l.it = l.f.Iterator(ctx, mb.fetch, l.it)
		for {
			b, ok := l.it.NextBatch(math.MinInt64)
			if !ok {
				break
			}
			l.slab = append(l.slab, b...)
		}
		if err := l.it.Err(); err != nil {
			return nil, err
		}
		mb.notes = l.it.Notes()
		if len(l.slab) > at || len(mb.notes) > 0 {
			l.idx = append(l.idx, m)
			l.spans = append(l.spans, [2]int{at, len(l.slab)})
		}
	}
	for i, m := range l.idx { // the slab has stopped moving
		sp := l.spans[i]
		mb := &x.members[m]
		mb.pts = l.slab[sp[0]:sp[1]:sp[1]]
		mb.points = len(mb.pts) > 0
	}
	return l.idx, nil
}

// release ends the sub-query's lazy read, giving the fetched rows back.
func (l *lazyRead) release() {
	if l.it != nil {
		l.it.Close()
		l.it = nil
	}
	if l.f != nil {
		l.f.Release()
		l.f = nil
	}
}

// reset drops the last query's points, keeping a slab of reasonable size.
func (l *lazyRead) reset() {
	l.slab, l.idx, l.spans = l.slab[:0], l.idx[:0], l.spans[:0]
	if cap(l.slab) > maxLazySlab {
		l.slab = nil // one huge group should not pin its points
	}
}
