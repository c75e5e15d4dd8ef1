package read

import (
	"context"

	"github.com/tsd-db/tsd/series"
)

// Visitor receives the points of a Visit as they are decoded, a row at a
// time, so that a consumer folding them (a downsampler) never holds a
// series whole.
type Visitor interface {
	// Points receives the next points of series i (its index in
	// Selection.Series), in the core's order (see the package doc): pts
	// is never empty, is valid only during the call and must not be
	// modified (it may be the row cache's).
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

// Visit gives v the points of every selected series in the range (and
// with Selection.Notes their annotations), a row at a time as the core
// merges them, plan as Read's. The first error (v's, the store's, a
// *LimitError or the context's) stops the visit and is returned.
func (r *Reader) Visit(ctx context.Context, sel Selection, v Visitor) error {
	st := r.streams.Get().(*stream)
	defer r.putStream(st)
	sv, _ := v.(SumVisitor)
	st.visit = visitSink{v: v, sv: sv}
	return st.push(ctx, &sel, &st.visit)
}

// visitSink is Visit's rowSink.
type visitSink struct {
	v  Visitor
	sv SumVisitor // v, when it takes sums
}

// row gives the visitor a row, with its sum when the row ends the row
// cache's entry and the entry has one.
func (s *visitSink) row(i int, pts []series.Point, entry *cacheEntry) error {
	if s.sv != nil && entry != nil {
		if sum, maxAbs, ok := entry.spanSum(pts, len(pts)); ok {
			return s.sv.PointsSum(i, pts, sum, maxAbs)
		}
	}
	return s.v.Points(i, pts)
}

func (s *visitSink) end(i int, notes []Note) error {
	if len(notes) > 0 {
		s.v.Notes(i, notes)
	}
	return nil
}
