package read

import (
	"context"
	"math"

	"github.com/tsd-db/tsd/series"
)

// Visitor receives the points of a Visit as they are decoded, a row at a
// time, so that a consumer folding them (a downsampler) never holds a
// series whole.
type Visitor interface {
	// Points receives the next points of series i (its index in
	// Selection.Series): sorted by time, after every point given before
	// for i, in the range, the head's merged in (the head wins a
	// timestamp found in both). pts is never empty, is valid only during
	// the call and must not be modified (it may be the row cache's).
	// Calls for one series come from one goroutine at a time; calls for
	// different series may run at once.
	Points(i int, pts []series.Point) error
	// Notes receives series i's annotations in the range, sorted by time,
	// once, when Selection.Notes is set and it has some. The Visitor owns
	// the slice. Concurrency as for Points.
	Notes(i int, notes []Note)
}

// SumVisitor is a Visitor that can fold a batch by its exact integer sum
// (a row from the row cache whose points are all Ints, n × the largest
// magnitude at most 2^53): a sum or average need not read the points.
type SumVisitor interface {
	Visitor
	// PointsSum is Points for a batch whose points are Ints adding up
	// exactly to sum, none above maxAbs in magnitude; pts still holds them
	// for whatever the sum cannot serve.
	PointsSum(i int, pts []series.Point, sum int64, maxAbs uint64) error
}

// visitState is one Visit's state, pooled by the Reader: the task its
// plan's workers run and the sink of its scan's rows.
type visitState struct {
	r     *Reader
	sel   Selection
	v     Visitor
	scan  bool             // the plan: true scans buckets, false Gets series
	ids   map[string]int32 // TSUID -> index in the selection
	hrows []headRow        // every series' head rows, one slab
	hslab []series.Point   // their decoded copies
	spans []visitSeries
	offs  []int // series' bounds in hrows
}

// visitSeries is one series' head rows still to give and its notes.
type visitSeries struct {
	head  []headRow // head rows not yet given, in visitState.hrows
	notes []Note
}

// Visit gives v the points of every selected series in the range (and
// with Selection.Notes their annotations), plan as Read's, the scan's salt
// buckets and the per-series plan's series read in parallel. Each
// series' points arrive in time order. The first error (v's, the store's,
// a *LimitError or the context's) stops the visit and is returned.
func (r *Reader) Visit(ctx context.Context, sel Selection, v Visitor) error {
	if ok, err := r.begin(ctx, &sel); !ok {
		return err
	}
	vs := r.visits.Get().(*visitState)
	defer r.putVisitState(vs)
	vs.sel, vs.v = sel, v
	// The head before the store: a row leaves the head only once the store
	// has it, so no point falls between the two reads.
	if err := vs.readHeads(ctx); err != nil {
		return err
	}
	var err error
	if vs.scan = r.plan(&sel) == PlanScan; vs.scan {
		vs.ids = selectionIDs(vs.ids, &vs.sel)
		err = r.forBuckets(ctx, vs)
	} else {
		err = r.forSeries(ctx, &vs.sel, vs)
	}
	if err != nil {
		return err
	}
	// Head rows after a series' last stored row (all of them right after
	// a bulk load) are given by workers too.
	return r.forSeries(ctx, &vs.sel, visitEnd{vs})
}

// visitEnd is the task that ends a Visit's series.
type visitEnd struct{ vs *visitState }

func (e visitEnd) run(_ context.Context, _ *rowReader, i int) error { return e.vs.end(i) }

// maxPooledVisit is the largest head slab (points) putVisitState keeps.
const maxPooledVisit = 1 << 16

func (r *Reader) putVisitState(vs *visitState) {
	clear(vs.spans)
	vs.spans = vs.spans[:0]
	clear(vs.ids)
	clear(vs.hrows) // drop cache entries
	vs.hrows = vs.hrows[:0]
	if cap(vs.hslab) > maxPooledVisit {
		vs.hslab = nil
	}
	vs.sel, vs.v = Selection{}, nil
	r.visits.Put(vs)
}

// readHeads reads every selected series' head rows in the range.
func (vs *visitState) readHeads(ctx context.Context) error {
	sel := &vs.sel
	vs.spans = resizeSpans(vs.spans, len(sel.Series))
	var err error
	vs.hrows, vs.hslab, vs.offs, _, err = vs.r.readHeadRows(ctx, sel, vs.hrows[:0], vs.hslab[:0], vs.offs)
	if err != nil {
		return err
	}
	for i := range sel.Series {
		vs.spans[i].head = vs.hrows[vs.offs[i]:vs.offs[i+1]:vs.offs[i+1]]
	}
	return nil
}

func resizeSpans(s []visitSeries, n int) []visitSeries {
	if cap(s) < n {
		return make([]visitSeries, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// give gives v series i's stored points of one row (decoded into rr,
// any order of rows' hours but ascending), after its head rows of earlier
// hours and merged with its head row of the same hour.
func (vs *visitState) give(rr *rowReader, i int, row []series.Point, base int64) error {
	if err := vs.giveHeads(i, base); err != nil {
		return err
	}
	sp := &vs.spans[i]
	pts, entry := clip(row, vs.sel.Start, vs.sel.End), rr.entry
	if len(sp.head) > 0 && sp.head[0].base == base {
		hr := &sp.head[0]
		sp.head = sp.head[1:]
		head := clip(hr.points(vs.hslab), vs.sel.Start, vs.sel.End)
		if len(pts) == 0 {
			pts, entry = head, hr.entry
		} else if len(head) > 0 {
			rr.head = mergeHead(rr.head[:0], pts, head)
			pts, entry = rr.head, nil
		}
	}
	return vs.emit(i, pts, entry)
}

// giveHeads gives v series i's head rows of the hours before base, and
// drops them from its span.
func (vs *visitState) giveHeads(i int, base int64) error {
	sp := &vs.spans[i]
	for len(sp.head) > 0 && sp.head[0].base < base {
		hr := &sp.head[0]
		if err := vs.emit(i, clip(hr.points(vs.hslab), vs.sel.Start, vs.sel.End), hr.entry); err != nil {
			return err
		}
		sp.head = sp.head[1:]
	}
	return nil
}

// emit gives v points of series i, with their sum when they are the end
// of entry's row (the row cache's) and it has one.
func (vs *visitState) emit(i int, pts []series.Point, entry *cacheEntry) error {
	if len(pts) == 0 {
		return nil
	}
	if sv, ok := vs.v.(SumVisitor); ok && entry != nil {
		if sum, maxAbs, ok := entry.suffixSum(pts); ok {
			return sv.PointsSum(i, pts, sum, maxAbs)
		}
	}
	return vs.v.Points(i, pts)
}

// end gives v series i's head rows after its last stored row and its
// notes.
func (vs *visitState) end(i int) error {
	if err := vs.giveHeads(i, math.MaxInt64); err != nil {
		return err
	}
	s := &vs.spans[i]
	if notes := clipNotes(s.notes, vs.sel.Start, vs.sel.End); len(notes) > 0 {
		vs.v.Notes(i, notes)
	}
	return nil
}

// run reads salt bucket i with the scan plan, series i with the
// per-series plan.
func (vs *visitState) run(ctx context.Context, rr *rowReader, i int) error {
	if vs.scan {
		return vs.r.scanRows(ctx, rr, i, &vs.sel, vs.ids, vs)
	}
	return vs.getSeries(ctx, rr, i)
}

// getSeries Gets series i's rows.
func (vs *visitState) getSeries(ctx context.Context, rr *rowReader, i int) error {
	sel := &vs.sel
	s := &sel.Series[i]
	tsuid := []byte(s.TSUID)
	rr.want, rr.notes = sel.Notes, rr.notes[:0]
	sp := spanOf(s)
	first, last := hourRange(&sp, sel.Start, sel.End)
	for h := first; h <= last; h += hourMs {
		var err error
		if rr.store, err = rr.getRow(ctx, rr.store[:0], tsuid, h, sel.Budget); err != nil {
			return err
		}
		if err := vs.give(rr, i, rr.store, h); err != nil {
			return err
		}
	}
	if len(rr.notes) > 0 {
		vs.spans[i].notes = append(vs.spans[i].notes, rr.notes...)
	}
	return nil
}

// row gives v a scanned row's points.
func (vs *visitState) row(rr *rowReader, id int32, baseSec int64) error {
	rr.notes = rr.notes[:0]
	pts, hit, err := rr.view(rr.store, baseSec, vs.sel.Budget)
	if !hit {
		rr.store = pts
	}
	if len(rr.notes) > 0 {
		vs.spans[id].notes = append(vs.spans[id].notes, rr.notes...)
	}
	if err != nil {
		return err
	}
	return vs.give(rr, int(id), pts, baseSec*1000)
}
