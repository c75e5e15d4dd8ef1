package promql

import (
	"cmp"
	"math"
	"slices"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// seriesSet walks the selected series.
type seriesSet struct {
	ss []*tsdSeries
	i  int
}

func (s *seriesSet) Next() bool {
	if s.i+1 >= len(s.ss) {
		s.i = len(s.ss)
		return false
	}
	s.i++
	return true
}

func (s *seriesSet) At() storage.Series              { return s.ss[s.i] }
func (*seriesSet) Err() error                        { return nil }
func (*seriesSet) Warnings() annotations.Annotations { return nil }

// tsdSeries is one selected series; its samples are read when iterated.
type tsdSeries struct {
	qr   *querier
	s    index.Series
	lbls labels.Labels
	mr   *metricRead // the read of the series' metric
	fi   int         // the series' index in mr
	pd   *pushdown   // non-nil: Iterator returns the windows' results
	fill int64       // >0: a window selector's lookback, stale markers added (staleFill)
	ones bool        // count mode, not pushed down: every value reads 1
}

// Labels implements storage.Series.
func (s *tsdSeries) Labels() labels.Labels { return s.lbls }

// Iterator implements storage.Series: a lazy read of the selected range.
// Every call starts a new read; reuse lends its adapter and buffers.
func (s *tsdSeries) Iterator(reuse chunkenc.Iterator) chunkenc.Iterator {
	if s.pd != nil {
		return s.windowIterator(reuse)
	}
	it, ok := reuse.(*Iterator)
	if !ok {
		it = &Iterator{}
	}
	var prev *read.SeriesIterator
	if it.qr == s.qr {
		prev, _ = it.it.(*read.SeriesIterator) // this querier closes it
	}
	it.Reset(s.qr.iterator(s.mr, s.fi, prev))
	it.qr, it.ones = s.qr, s.ones
	return it
}

// windowIterator is Iterator for a pushed-down Select.
func (s *tsdSeries) windowIterator(reuse chunkenc.Iterator) chunkenc.Iterator {
	if s.fill <= 0 {
		return s.windowSource(reuse)
	}
	f, ok := reuse.(*staleFill)
	if !ok {
		f = &staleFill{}
	}
	f.reset(s.windowSource(f.src), s.pd, s.fill)
	return f
}

// windowSource iterates the series' windows: one sample per non-empty
// window, at its end.
func (s *tsdSeries) windowSource(reuse chunkenc.Iterator) chunkenc.Iterator {
	if s.mr.rw.use {
		return s.rollupIterator(reuse)
	}
	if s.mr.ahead() {
		return s.aheadIterator(reuse)
	}
	w, ok := reuse.(*windowIter)
	if !ok {
		w = &windowIter{}
	}
	var prev *read.SeriesIterator
	if w.qr == s.qr {
		prev, _ = w.src.(*read.SeriesIterator) // this querier closes it
	}
	w.reset(s.qr.iterator(s.mr, s.fi, prev), s.pd)
	w.qr = s.qr
	return w
}

// aheadIterator walks the series' windows evaluated ahead.
func (s *tsdSeries) aheadIterator(reuse chunkenc.Iterator) chunkenc.Iterator {
	pts, err := s.mr.windows(s.fi)
	if err != nil {
		return NewIterator(errIterator{err})
	}
	it, ok := reuse.(*Iterator)
	if !ok {
		it = &Iterator{}
	}
	si, _ := it.it.(*series.SliceIterator)
	it.Reset(series.NewSliceIterator(si, pts))
	return it
}

// Iterator adapts a series.Iterator to Prometheus's chunkenc.Iterator:
// float samples only, the staleness marker as value.StaleNaN.
type Iterator = iterator[int64]

// iterator is Iterator. Seek's argument has a type parameter (always
// int64) because go vet's stdmethods check takes any Seek(int64, ...)
// method for a broken io.Seeker; chunkenc's Seek is not one.
type iterator[T ~int64] struct {
	it   series.Iterator
	rows batcher        // it, when it hands out whole rows
	pts  []series.Point // with rows: the current row from j on
	j    int
	qr   *querier // the querier whose Close ends it, if any
	sample
	ok   bool // positioned on a sample
	done bool
	ones bool // count mode: every value but the staleness marker is 1
}

// batcher is a series.Iterator that hands out a row of points at a time
// (read.SeriesIterator): the adapter then walks the slice itself, which
// saves two interface calls per sample.
type batcher interface {
	NextBatch(t int64) ([]series.Point, bool)
}

var _ chunkenc.Iterator = (*Iterator)(nil)

// NewIterator returns an adapter over it.
func NewIterator(it series.Iterator) *Iterator {
	a := &Iterator{}
	a.Reset(it)
	return a
}

// Reset makes the adapter walk it from its start.
func (a *iterator[T]) Reset(it series.Iterator) {
	*a = iterator[T]{it: it, j: -1}
	a.rows, _ = it.(batcher)
}

// Next implements chunkenc.Iterator.
func (a *iterator[T]) Next() chunkenc.ValueType {
	switch {
	case a.done:
		return chunkenc.ValNone
	case a.rows == nil:
		return a.settle(a.it.Next())
	}
	if a.j++; a.j < len(a.pts) {
		return a.set(&a.pts[a.j])
	}
	return a.batch(math.MinInt64)
}

// Seek implements chunkenc.Iterator: no move when the current sample is at
// or after t.
func (a *iterator[T]) Seek(t T) chunkenc.ValueType {
	switch {
	case a.done:
		return chunkenc.ValNone
	case a.ok && a.t >= int64(t):
		return chunkenc.ValFloat
	case a.rows == nil:
		return a.settle(a.it.SeekTime(int64(t)))
	}
	j := max(a.j, 0)
	if n := len(a.pts); j < n && a.pts[n-1].T >= int64(t) {
		k, _ := slices.BinarySearchFunc(a.pts[j:], int64(t), cmpPointTime)
		a.j = j + k
		return a.set(&a.pts[a.j])
	}
	return a.batch(int64(t))
}

func cmpPointTime(p series.Point, t int64) int { return cmp.Compare(p.T, t) }

// batch moves to the first sample at or after t of the next row.
func (a *iterator[T]) batch(t int64) chunkenc.ValueType {
	pts, ok := a.rows.NextBatch(t)
	if !ok {
		a.pts, a.ok, a.done = nil, false, true
		return chunkenc.ValNone
	}
	a.pts, a.j = pts, 0
	return a.set(&pts[0])
}

func (a *iterator[T]) set(p *series.Point) chunkenc.ValueType {
	a.ok, a.t, a.v = true, p.T, floatOf(*p)
	if a.ones && !isStale(p) {
		a.v = 1
	}
	return chunkenc.ValFloat
}

func (a *iterator[T]) settle(ok bool) chunkenc.ValueType {
	if !ok {
		a.ok, a.done = false, true
		return chunkenc.ValNone
	}
	p := a.it.At()
	return a.set(&p)
}

// floatOf converts a point to Prometheus's float, the staleness marker
// (whatever float kind held it) to value.StaleNaN.
func floatOf(p series.Point) float64 {
	if isStale(&p) {
		return math.Float64frombits(value.StaleNaN)
	}
	return p.Float()
}

// isStale reports whether p is the staleness marker, held by any float
// kind as floatOf reads it (series.Point.IsStale looks at Float64 points
// only); every staleness test of this package's reads uses it.
func isStale(p *series.Point) bool { return p.Kind != series.Int && p.Bits == series.StaleNaN }

// sample is the float sample an iterator stands on, with the
// chunkenc.Iterator accessors both adapters (iterator, windowIterator)
// share.
type sample struct {
	t int64
	v float64
}

// At implements chunkenc.Iterator.
func (s *sample) At() (int64, float64) { return s.t, s.v }

// AtHistogram implements chunkenc.Iterator; tsd stores no histograms.
func (s *sample) AtHistogram(*histogram.Histogram) (int64, *histogram.Histogram) {
	return s.t, nil
}

// AtFloatHistogram implements chunkenc.Iterator; tsd stores no histograms.
func (s *sample) AtFloatHistogram(*histogram.FloatHistogram) (int64, *histogram.FloatHistogram) {
	return s.t, nil
}

// AtT implements chunkenc.Iterator.
func (s *sample) AtT() int64 { return s.t }

// AtST implements chunkenc.Iterator: tsd keeps no start timestamps.
func (*sample) AtST() int64 { return 0 }

// Err implements chunkenc.Iterator.
func (a *iterator[T]) Err() error {
	if a.it == nil {
		return nil
	}
	return a.it.Err()
}
