package agg

import (
	"math"
	"slices"
	"sort"

	"github.com/tsd-db/tsd/series"
)

// Buckets downsamples one series as its raw points are pushed, row by row,
// instead of pulled through an iterator: the read path decodes a row and
// folds it into the series' buckets at once, so no series is ever held as
// raw points. GroupByBuckets then merges the buckets exactly as GroupBy
// merges the same series pulled raw: the bucket times and values are those
// the pull downsampler computes, after the same seek (the window's first
// partial bucket skipped), with the same accumulator fed the same values in
// the same order; fill policies and rates run on top in GroupBy as before.
//
// Fixed intervals and "all" only: PushSpec says whether a spec qualifies.
// The zero value is ready after Reset; a reused Buckets keeps its memory.
// Not safe for concurrent use.
type Buckets struct {
	ds           *Downsample
	from         int64 // the seek target: earlier points are skipped
	qStart, qEnd int64 // "all" keeps [qStart, qEnd)
	acc          Accumulator
	open         bool  // a bucket holds values
	bStart, bEnd int64 // the open bucket's [start, end)
	first        int64 // the first point kept
	kept         bool  // a point was kept
	out          []point
}

// PushSpec reports whether spec's downsampling can run in Buckets:
// downsampling by a fixed interval or "all", not by calendar.
func PushSpec(spec *Spec) bool {
	return spec.Downsample != nil && !spec.Downsample.Calendar
}

// Reset prepares b for a series of spec (PushSpec true; defaults are
// ensured here as NewGroupBy does).
func (b *Buckets) Reset(spec Spec) {
	spec.EnsureDefaults()
	out := b.out[:0]
	acc := b.acc
	*b = Buckets{ds: spec.Downsample, qStart: spec.QueryStart, qEnd: spec.QueryEnd, out: out, acc: acc}
	b.acc.Reset(b.ds.Agg)
	b.from = spec.Start
	if !b.ds.All {
		b.from = b.align(spec.Start + b.ds.Interval - 1)
	}
}

// Grow makes room for n more buckets, so that a caller that knows how many
// will come (rollup cells, one per bucket) copies none while they arrive.
// Call it after Reset.
func (b *Buckets) Grow(n int) { b.out = slices.Grow(b.out, n) }

func (b *Buckets) align(t int64) int64 { return t - t%b.ds.Interval }

// Push folds the next points of the series, in time order after every
// point pushed before.
func (b *Buckets) Push(pts []series.Point) {
	for len(pts) > 0 && pts[0].T < b.from {
		pts = pts[1:]
	}
	if len(pts) == 0 {
		return
	}
	if !b.kept {
		b.kept, b.first = true, pts[0].T
	}
	if b.ds.All {
		b.pushAll(pts)
		return
	}
	for len(pts) > 0 {
		if !b.open || pts[0].T >= b.bEnd {
			b.close()
			b.bStart = b.align(pts[0].T)
			b.bEnd, b.open = b.bStart+b.ds.Interval, true
		}
		n := len(pts)
		if pts[n-1].T >= b.bEnd { // the common case, a row inside one bucket, skips this
			n = sort.Search(n, func(i int) bool { return pts[i].T >= b.bEnd })
		}
		addPoints(&b.acc, pts[:n])
		pts = pts[n:]
	}
}

// PushSum is Push for points that are all Ints adding up exactly to sum,
// none above maxAbs in magnitude: when they fall in one bucket of a sum
// or avg, it adds sum as addPoints' exact integer path would have, without
// reading them.
func (b *Buckets) PushSum(pts []series.Point, sum int64, maxAbs uint64) {
	n := len(pts)
	if b.ds.All || n == 0 || pts[0].T < b.from || b.align(pts[0].T) != b.align(pts[n-1].T) {
		b.Push(pts)
		return
	}
	if !b.kept {
		b.kept, b.first = true, pts[0].T
	}
	if !b.open || pts[0].T >= b.bEnd {
		b.close()
		b.bStart = b.align(pts[0].T)
		b.bEnd, b.open = b.bStart+b.ds.Interval, true
	}
	if !addIntSum(&b.acc, n, sum, maxAbs) {
		addPoints(&b.acc, pts)
	}
}

// addIntSum adds n Int points whose exact sum is sum to a sum or avg under
// sumInts' conditions (every point below 2^31 in magnitude, at most 2^20
// of them, the running sum an integer below intSumMax), giving the very
// float sum it would; false leaves c alone.
func addIntSum(c *Accumulator, n int, sum int64, maxAbs uint64) bool {
	if (c.agg.kind != kSum && c.agg.kind != kAvg) || n > 1<<20 || maxAbs >= 1<<31 ||
		!(c.f > -intSumMax && c.f < intSumMax) || c.f != math.Trunc(c.f) {
		return false
	}
	c.f, c.n = c.f+float64(sum), c.n+int64(n)
	return true
}

// pushAll keeps the points in [qStart, qEnd) in the one bucket.
func (b *Buckets) pushAll(pts []series.Point) {
	i := 0
	for i < len(pts) && pts[i].T < b.qStart {
		i++
	}
	j := i
	for j < len(pts) && pts[j].T < b.qEnd {
		j++
	}
	if j > i {
		b.open, b.bStart = true, b.qStart
		addPoints(&b.acc, pts[i:j])
	}
}

// close emits the open bucket.
func (b *Buckets) close() {
	if !b.open {
		return
	}
	b.out = append(b.out, floatPt(b.bStart, b.acc.Float()))
	b.acc.Reset(b.ds.Agg)
	b.open = false
}

// Finish emits the last bucket; call it after the last Push.
func (b *Buckets) Finish() { b.close() }

// Len returns the number of buckets emitted.
func (b *Buckets) Len() int { return len(b.out) }

// addPoints adds the values of pts to c, as AddFloat would one by one.
func addPoints(c *Accumulator, pts []series.Point) {
	switch c.agg.kind {
	case kSum, kAvg:
		if sum, ok := sumInts(pts, c.f); ok {
			c.f, c.n = sum, c.n+int64(len(pts))
			break
		}
		sum, n := c.f, c.n
		for i := range pts {
			if v := pts[i].Float(); v == v {
				sum += v
				n++
			}
		}
		c.f, c.n = sum, n
	case kMin:
		f := c.f
		for i := range pts {
			if v := pts[i].Float(); v < f {
				f = v
			}
		}
		c.f = f
	case kMax:
		f := c.f
		for i := range pts {
			if v := pts[i].Float(); v > f {
				f = v
			}
		}
		c.f = f
	default:
		for i := range pts {
			c.AddFloat(pts[i].Float())
		}
		return
	}
	if c.all == 0 {
		c.first = math.Float64bits(pts[0].Float())
	}
	c.all += int64(len(pts))
	c.last = math.Float64bits(pts[len(pts)-1].Float())
}

// intSumMax bounds the running float sum sumInts adds to: with every
// value below 2^31 in magnitude and at most 2^20 of them, every partial sum
// stays below 2^53, where float64 adds integers exactly.
const intSumMax = 1 << 51

// sumInts returns sum plus the values of pts, added in an int64, when
// that is exactly what adding them one by one in float64 gives: every
// point an integer below 2^31 in magnitude and sum an integer below
// intSumMax, so no float add rounds. ok is false otherwise.
func sumInts(pts []series.Point, sum float64) (float64, bool) {
	if len(pts) > 1<<20 || !(sum > -intSumMax && sum < intSumMax) || sum != math.Trunc(sum) {
		return 0, false
	}
	var s int64
	var bad uint64
	for i := range pts {
		p := &pts[i]
		bad |= uint64(p.Kind) | (p.Bits+1<<31)>>32
		s += int64(p.Bits)
	}
	if bad != 0 {
		return 0, false
	}
	return sum + float64(s), true
}

// preSource is a stream's view of a Buckets: the downsampler reads its
// buckets instead of folding raw points.
type preSource struct {
	b *Buckets
	i int
}

// NewGroupByBuckets is NewGroupBy over series downsampled by Buckets (each
// Reset with spec, pushed and finished): the same output as NewGroupBy
// over the raw series. spec must satisfy PushSpec.
func NewGroupByBuckets(reuse *GroupBy, spec Spec, inputs []*Buckets) *GroupBy {
	g := reuse
	if g == nil {
		g = &GroupBy{}
	}
	g.emptyIters = resize(g.emptyIters, len(inputs))
	g.iters = g.iters[:0]
	for i := range inputs {
		g.iters = append(g.iters, &g.emptyIters[i])
	}
	g = NewGroupBy(g, spec, g.iters)
	if g.err == nil && !PushSpec(&g.spec) {
		g.err = errNotPushed
	}
	if g.err != nil {
		return g
	}
	for i, b := range inputs {
		g.streams[i].ds.pre = preSource{b: b}
	}
	return g
}

// AppendSingle appends the rest of g's output to dst and reports true
// when g is a NewGroupByBuckets over one series without rate or fill
// whose aggregator floatOne computes: the group's points are then its
// buckets' values through floatOne, in order, so they are copied in one
// loop instead of stepping the pipeline per point (the rollup answers'
// one-series groups, where the stepping cost more than reading the
// cells). Otherwise it appends nothing and reports false; Next then
// walks the output as usual. After true, Next reports false.
func (g *GroupBy) AppendSingle(dst []series.Point) ([]series.Point, bool) {
	if g.err != nil || g.have || len(g.streams) != 1 || g.spec.Rate {
		return dst, false
	}
	st := &g.streams[0]
	b := st.ds.pre.b // stale unless the stream downsamples
	if !st.hasDS || b == nil || st.ds.fill {
		return dst, false
	}
	if _, ok := floatOne(g.spec.Agg, 0); !ok {
		return dst, false
	}
	if !g.started {
		g.start()
		if g.err != nil {
			return dst, true
		}
	}
	sl := &g.slots[0]
	if !sl.nxtOK {
		return dst, true
	}
	// The pending point, then the buckets not yet read, as step and
	// advance would take them: none after End, none after QueryEnd.
	dst = slices.Grow(dst, 1+len(b.out)-st.ds.pre.i)
	p := sl.nxt
	for i := st.ds.pre.i; ; i++ {
		if p.t > g.spec.End || p.t > g.spec.QueryEnd {
			break
		}
		if p.t >= g.spec.QueryStart {
			f, _ := floatOne(g.spec.Agg, p.f64())
			dst = append(dst, series.Float64Point(p.t, f))
		}
		if i >= len(b.out) {
			break
		}
		p = b.out[i]
	}
	st.ds.pre.i = len(b.out)
	sl.nxtOK, sl.curOK = false, false
	return dst, true
}
