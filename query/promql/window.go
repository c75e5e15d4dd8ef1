package promql

import (
	"math"

	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/kahansum"

	"github.com/tsd-db/tsd/series"
)

// windowIter is a pushed-down series' chunkenc.Iterator: one sample per
// non-empty window of its plan, at the window's end, holding the range
// function's result over the window's samples (staleness markers dropped,
// as the engine drops them).
type windowIter = windowIterator[int64]

// windowIterator is windowIter; T as in iterator.
type windowIterator[T ~int64] struct {
	src  series.Iterator
	rows batcher
	sums batchSummer   // nil unless src can sum a cached batch
	exts batchExtremer // nil unless src knows a cached batch's extremes
	pd   *pushdown
	qr   *querier // the querier whose Close ends src, if any
	pts  []series.Point
	j    int   // next unread point of pts
	k    int64 // next window
	sample
	ok   bool
	done bool
	end  bool // src is exhausted
}

var _ chunkenc.Iterator = (*windowIter)(nil)

// reset makes w evaluate pd over src from its start.
func (w *windowIterator[T]) reset(src series.Iterator, pd *pushdown) {
	*w = windowIterator[T]{src: src, pd: pd, qr: w.qr}
	if s, ok := src.(batchSummer); ok {
		w.sums = s
	}
	if x, ok := src.(batchExtremer); ok {
		w.exts = x
	}
	if b, ok := src.(batcher); ok {
		w.rows = b
	} else {
		w.rows = &oneByOne{it: src}
	}
}

// Next implements chunkenc.Iterator.
func (w *windowIterator[T]) Next() chunkenc.ValueType {
	for !w.done {
		e := w.pd.first + w.k*w.pd.step
		if e > w.pd.last || (w.pd.step == 0 && w.k > 0) {
			break
		}
		w.k++
		if w.window(e) {
			w.ok, w.t = true, e
			return chunkenc.ValFloat
		}
		if w.end {
			break
		}
		w.skipEmpty()
	}
	w.ok, w.done = false, true
	return chunkenc.ValNone
}

// Seek implements chunkenc.Iterator: the first non-empty window ending at
// or after t, no move when the current one does.
func (w *windowIterator[T]) Seek(t T) chunkenc.ValueType {
	switch {
	case w.done:
		return chunkenc.ValNone
	case w.ok && w.t >= int64(t):
		return chunkenc.ValFloat
	}
	if d := int64(t) - w.pd.first; d > 0 {
		if w.pd.step == 0 {
			w.k = max(w.k, 1)
		} else {
			w.k = max(w.k, (d+w.pd.step-1)/w.pd.step)
		}
	}
	return w.Next()
}

// skipEmpty moves the next window to the first one that can hold the
// next point, after an empty window: sparse series skip their gaps.
func (w *windowIterator[T]) skipEmpty() {
	if w.pd.step == 0 || w.j >= len(w.pts) {
		return
	}
	if d := w.pts[w.j].T - w.pd.first; d > 0 {
		w.k = max(w.k, (d+w.pd.step-1)/w.pd.step)
	}
}

// window computes the function over (e-rng, e] into v; false if the
// window holds no sample.
func (w *windowIterator[T]) window(e int64) bool {
	if !w.seekAfter(e - w.pd.rng) {
		return false
	}
	var a agg
	for {
		if n := w.sumBatch(&a, w.pts[w.j:], e); n > 0 {
			w.j += n
		} else if n := w.extremeBatch(&a, w.pts[w.j:], e); n > 0 {
			w.j += n
		} else {
			w.j += a.add(w.pd.fn, w.pts[w.j:], e)
		}
		if w.j < len(w.pts) || !w.more(math.MinInt64) {
			break
		}
	}
	if a.empty() {
		return false
	}
	w.v = a.result(w.pd.fn)
	return true
}

// batchSummer is a source that knows the exact integer sum of a span of
// its last batch (read.SeriesIterator, for rows from its row cache).
type batchSummer interface {
	BatchSum(pts []series.Point, k int) (sum int64, maxAbs uint64, ok bool)
}

// sumBatch folds the points of pts, the rest of the current batch, that
// are in the window into a sum or avg from the source's exact sum while
// the integer path still holds; it returns how many it took (0: none,
// the caller adds them one by one). A window that does not line up with
// the rows (a range query whose start is not on the hour, as TSBS's
// queries are) takes the end of one row and the start of the next, each
// from the row's block sums.
func (w *windowIterator[T]) sumBatch(a *agg, pts []series.Point, e int64) int {
	if w.sums == nil || (w.pd.fn != fnSum && w.pd.fn != fnAvg) || len(pts) == 0 {
		return 0
	}
	k := upTo(pts, e)
	if k == 0 {
		return 0
	}
	s, m, ok := w.sums.BatchSum(pts, k)
	if !ok || !a.addExact(s, m, k) {
		return 0
	}
	return k
}

// batchExtremer is a source that knows the smallest and largest value of
// a span of its last batch (read.SeriesIterator, for Int rows from its
// row cache).
type batchExtremer interface {
	BatchExtremes(pts []series.Point, k int) (lo, hi int64, ok bool)
}

// extremeBatch folds the points of pts, the rest of the current batch,
// that are in the window into a max or min from the source's extremes,
// as addMax and addMin fold a run of Int points (foldMax, foldMin); it
// returns how many it took (0: none, the caller reads them one by one).
func (w *windowIterator[T]) extremeBatch(a *agg, pts []series.Point, e int64) int {
	if w.exts == nil || (w.pd.fn != fnMax && w.pd.fn != fnMin) {
		return 0
	}
	k := upTo(pts, e)
	lo, hi, ok := w.exts.BatchExtremes(pts, k)
	if !ok {
		return 0
	}
	if w.pd.fn == fnMax {
		a.foldMax(float64(hi), k)
	} else {
		a.foldMin(float64(lo), k)
	}
	return k
}

// seekAfter moves to the first point after lo; false if there is none.
func (w *windowIterator[T]) seekAfter(lo int64) bool {
	for {
		if w.j < len(w.pts) {
			if w.pts[w.j].T > lo {
				return true
			}
			if w.pts[len(w.pts)-1].T > lo {
				w.j += upTo(w.pts[w.j:], lo)
				return true
			}
		}
		if !w.more(lo + 1) {
			return false
		}
	}
}

// more loads the next batch of points at or after t.
func (w *windowIterator[T]) more(t int64) bool {
	if w.end {
		return false
	}
	pts, ok := w.rows.NextBatch(t)
	if !ok {
		w.pts, w.j, w.end = nil, 0, true
		return false
	}
	w.pts, w.j = pts, 0
	return true
}

// Err implements chunkenc.Iterator.
func (w *windowIterator[T]) Err() error {
	if w.src == nil {
		return nil
	}
	return w.src.Err()
}

// agg accumulates one window, with the arithmetic of Prometheus v0.310's
// functions.go: Kahan-Neumaier sums (kahansum.Inc), avg_over_time's
// direct mean switching to an incremental mean once the sum overflows,
// max and min replacing a NaN.
//
// Sums of integers start exact, in an int64: while every partial sum is
// an integer within ±2^53, each Kahan step is exact and leaves the
// compensation at +0, so float64(the int64 sum) with a zero compensation
// is the very state the float loop would have reached.
type agg struct {
	n       float64 // samples so far (with mixed)
	v       float64 // sum (sum, avg), extreme (min, max), last value
	c       float64 // Kahan compensation
	mean    float64 // avg after overflow
	incMean bool
	mixed   bool  // sum, avg: left the exact integer sum
	is, in  int64 // sum, avg: the exact sum and count while !mixed
}

// exactInt bounds the integers float64 holds exactly.
const exactInt = 1 << 53

// add folds in the points of pts up to time e, skipping staleness
// markers, and returns how many it read.
func (a *agg) add(fn rangeFunc, pts []series.Point, e int64) int {
	switch fn {
	case fnSum, fnAvg:
		return a.addSum(fn == fnAvg, pts, e)
	case fnMax:
		return a.addMax(pts, e)
	case fnMin:
		return a.addMin(pts, e)
	}
	for i := range pts {
		p := &pts[i]
		if p.T > e {
			return i
		}
		if isStale(p) {
			continue
		}
		a.v = p.Float() // last, present, count
		a.n++
	}
	return len(pts)
}

// addMax is add for max_over_time. The loop over a window's points is
// most of a pushed-down max's work, so a run of Int points is compared as
// int64 and folded in once (foldMax), which reaches the state the
// point-by-point loop would: float64 conversion is monotone, so the
// run's largest converts to the largest of its conversions; an integer
// is never NaN nor a staleness marker; and the loop's rule (take f when
// it is greater, or the state is empty or NaN) leaves the same value
// whether it meets the run's points one by one or only their largest,
// -0 against 0 included (0 > -0 is false both ways).
func (a *agg) addMax(pts []series.Point, e int64) int {
	i, end := 0, upTo(pts, e)
	for i < end {
		if pts[i].Kind == series.Int {
			hi, j := int64(pts[i].Bits), i+1
			for ; j < end && pts[j].Kind == series.Int; j++ {
				hi = max(hi, int64(pts[j].Bits))
			}
			a.foldMax(float64(hi), j-i)
			i = j
			continue
		}
		if p := &pts[i]; !isStale(p) {
			a.foldMax(p.Float(), 1)
		}
		i++
	}
	return i
}

// foldMax folds in k points whose largest is f (k is 1 for a float
// point, or a run of Int points) with max_over_time's rule.
func (a *agg) foldMax(f float64, k int) {
	if a.n == 0 || f > a.v || math.IsNaN(a.v) {
		a.v = f
	}
	a.n += float64(k)
}

// foldMin is foldMax for min_over_time.
func (a *agg) foldMin(f float64, k int) {
	if a.n == 0 || f < a.v || math.IsNaN(a.v) {
		a.v = f
	}
	a.n += float64(k)
}

// upTo returns how many of pts, sorted by time, are at or before e. A
// collector samples at a fixed interval, so e's place is first guessed
// from the times of the ends and checked with its neighbour: one or two
// reads where a binary search makes nine on an hour of 10 s points, each
// likely a cache miss on a row read long ago. A guess that misses still
// narrows the search to one side of it.
func upTo(pts []series.Point, e int64) int {
	n := len(pts)
	if n == 0 || pts[n-1].T <= e {
		return n
	}
	if pts[0].T > e {
		return 0
	}
	// pts[0].T <= e < pts[n-1].T: the answer is in [1, n-1].
	lo, hi := 1, n-1
	g := 1 + int(float64(e-pts[0].T)/float64(pts[n-1].T-pts[0].T)*float64(n-1))
	g = min(max(g, lo), hi)
	if pts[g].T > e {
		if pts[g-1].T <= e {
			return g
		}
		hi = g - 1
	} else {
		lo = g + 1
	}
	for lo < hi { // a loop: the generic search's comparator call costs more
		m := int(uint(lo+hi) >> 1)
		if pts[m].T > e {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// addMin is addMax for min_over_time.
func (a *agg) addMin(pts []series.Point, e int64) int {
	i, end := 0, upTo(pts, e)
	for i < end {
		if pts[i].Kind == series.Int {
			lo, j := int64(pts[i].Bits), i+1
			for ; j < end && pts[j].Kind == series.Int; j++ {
				lo = min(lo, int64(pts[j].Bits))
			}
			a.foldMin(float64(lo), j-i)
			i = j
			continue
		}
		if p := &pts[i]; !isStale(p) {
			a.foldMin(p.Float(), 1)
		}
		i++
	}
	return i
}

// addExact folds in n Int points whose exact sum is s and magnitudes at
// most m, reaching the state addSum's integer loop would: only while the
// sum is exact and |sum so far| + n×m <= 2^53, which keeps every partial
// sum of the loop within its bounds.
func (a *agg) addExact(s int64, m uint64, n int) bool {
	if a.mixed {
		return false
	}
	abs := uint64(a.is)
	if a.is < 0 {
		abs = uint64(-a.is)
	}
	if abs > exactInt || (m != 0 && uint64(n) > (exactInt-abs)/m) {
		return false
	}
	a.is += s
	a.in += int64(n)
	return true
}

// addSum is add for a sum or an average.
func (a *agg) addSum(avg bool, pts []series.Point, e int64) int {
	i := 0
	if !a.mixed {
		s, n := a.is, a.in
		for ; i < len(pts); i++ {
			p := &pts[i]
			x := int64(p.Bits)
			if p.T > e || p.Kind != series.Int || x > exactInt || x < -exactInt || s+x > exactInt || s+x < -exactInt {
				break
			}
			s += x
			n++
		}
		a.is, a.in = s, n
		if i == len(pts) || pts[i].T > e {
			return i
		}
		a.mixed = true
		a.n, a.v, a.c = float64(n), float64(s), 0
	}
	if !a.incMean {
		i += a.addKahan(avg, pts[i:], e)
	}
	for ; i < len(pts); i++ {
		p := &pts[i]
		if p.T > e {
			return i
		}
		if isStale(p) {
			continue
		}
		f := p.Float()
		if avg {
			a.addAvg(f)
			continue
		}
		a.v, a.c = kahansum.Inc(f, a.v, a.c)
		a.n++
	}
	return len(pts)
}

// addKahan is the float loop of addSum while avg's sum does not overflow,
// kahansum.Inc written out on registers: it returns how many points it
// read, stopping before the first point after e or, for avg, before the
// point whose sum overflows, which addAvg then takes.
func (a *agg) addKahan(avg bool, pts []series.Point, e int64) int {
	sum, c, n := a.v, a.c, a.n
	i := 0
	for ; i < len(pts); i++ {
		p := &pts[i]
		if p.T > e {
			break
		}
		if isStale(p) {
			continue
		}
		f := p.Float()
		if avg && n == 0 {
			sum, n = f, 1
			continue
		}
		t := sum + f
		switch {
		case math.IsInf(t, 0):
			if avg {
				a.v, a.c, a.n = sum, c, n
				return i
			}
			c = 0
		case math.Abs(sum) >= math.Abs(f):
			c += (sum - t) + f
		default:
			c += (f - t) + sum
		}
		sum = t
		n++
	}
	a.v, a.c, a.n = sum, c, n
	return i
}

func (a *agg) addAvg(f float64) {
	if a.n == 0 {
		a.v, a.n = f, 1
		return
	}
	a.n++
	if !a.incMean {
		sum, c := kahansum.Inc(f, a.v, a.c)
		if !math.IsInf(sum, 0) {
			a.v, a.c = sum, c
			return
		}
		a.incMean = true
		a.mean = a.v / (a.n - 1)
		a.c /= a.n - 1
	}
	q := (a.n - 1) / a.n
	a.mean, a.c = kahansum.Inc(f/a.n, q*a.mean, q*a.c)
}

// empty reports whether the window holds no sample.
func (a *agg) empty() bool { return a.n == 0 && a.in == 0 }

// result is the window's value; never the staleness marker, which the
// engine would drop.
func (a *agg) result(fn rangeFunc) float64 {
	if (fn == fnSum || fn == fnAvg) && !a.mixed {
		a.n, a.v, a.c = float64(a.in), float64(a.is), 0
	}
	var r float64
	switch fn {
	case fnSum:
		r = a.v
		if !math.IsInf(r, 0) {
			r += a.c
		}
	case fnAvg:
		if a.incMean {
			r = a.mean + a.c
		} else {
			r = a.v/a.n + a.c/a.n
		}
	case fnPresent:
		r = 1
	case fnCount:
		r = a.n
	default:
		r = a.v
	}
	if value.IsStaleNaN(r) {
		r = math.Float64frombits(value.NormalNaN)
	}
	return r
}

// oneByOne hands out a series.Iterator without batches one point at a
// time.
type oneByOne struct {
	it      series.Iterator
	started bool
	buf     [1]series.Point
}

// NextBatch implements batcher.
func (o *oneByOne) NextBatch(t int64) ([]series.Point, bool) {
	var ok bool
	if !o.started {
		o.started, ok = true, o.it.SeekTime(t)
	} else if ok = o.it.Next(); ok && o.it.At().T < t {
		ok = o.it.SeekTime(t)
	}
	if !ok {
		return nil, false
	}
	o.buf[0] = o.it.At()
	return o.buf[:], true
}
