package opentsdb

import (
	"context"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
)

// fusedRead downsamples a sub-query's series as the reader decodes their
// rows (read.Reader.Visit into agg.Buckets): no series is held as raw
// points, and the downsampling runs on the reader's goroutines, one salt
// bucket or series each. It serves every sub-query whose downsampling
// agg.PushSpec accepts; the output is GroupBy's over the raw points, bit
// for bit.
type fusedRead struct {
	s []fusedSeries // per selected series
}

// fusedSeries is one selected series' buckets and notes.
type fusedSeries struct {
	b     agg.Buckets
	notes []read.Note
	n     int // points read in the range
}

// reset drops the notes of the last query; the buckets keep their memory.
func (f *fusedRead) reset() {
	for i := range f.s {
		f.s[i].notes, f.s[i].n = nil, 0
	}
}

// Points implements read.Visitor.
func (f *fusedRead) Points(i int, pts []series.Point) error {
	s := &f.s[i]
	s.b.Push(pts)
	s.n += len(pts)
	return nil
}

// PointsSum implements read.SumVisitor.
func (f *fusedRead) PointsSum(i int, pts []series.Point, sum int64, maxAbs uint64) error {
	s := &f.s[i]
	s.b.PushSum(pts, sum, maxAbs)
	s.n += len(pts)
	return nil
}

// Notes implements read.Visitor.
func (f *fusedRead) Notes(i int, notes []read.Note) { f.s[i].notes = notes }

// readFused is read through fusedRead: x.members get Buckets, not points,
// in selection order.
func (x *executor) readFused(ctx context.Context, sel *selection, spec agg.Spec, budget *read.Budget, notes bool) error {
	clear(x.members)
	x.members = x.members[:0]
	f := &x.fused
	f.reset()
	if cap(f.s) < len(sel.series) {
		f.s = make([]fusedSeries, len(sel.series))
	}
	f.s = f.s[:len(sel.series)]
	for i := range f.s {
		f.s[i].b.Reset(spec)
	}
	rsel := read.Selection{Series: sel.series, Start: spec.Start, End: spec.End - 1,
		MetricSeries: sel.metricSeries, Budget: budget, Notes: notes}
	if err := x.rd.Visit(ctx, rsel, f); err != nil {
		return err
	}
	for i := range f.s {
		s := &f.s[i]
		if s.n == 0 && len(s.notes) == 0 {
			continue
		}
		s.b.Finish()
		x.members = append(x.members, member{s: sel.series[i], bk: &s.b, notes: s.notes, points: s.n > 0})
	}
	return nil
}
