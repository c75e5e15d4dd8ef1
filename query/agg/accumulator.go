package agg

import (
	"math"
	"slices"
)

// Accumulator folds a sequence of values into one aggregate, exactly as the
// aggregator's runDouble (AddFloat/Float) or runLong (AddInt/Int) does in
// OpenTSDB 2.4, in one pass. Feed one path between two Resets, not both.
// Median and percentile keep the values in a buffer that survives Reset, so
// a reused Accumulator stops allocating once warm. Not safe for concurrent use.
type Accumulator struct {
	agg   *Aggregator
	all   int64   // values added
	n     int64   // values counted by the function (non-NaN on the float path)
	f     float64 // float path: sum, min, max, product, or running mean (dev)
	m2    float64 // dev: sum of squared deviations
	i     int64   // int path: sum, min, max, product
	first uint64  // bits of the first value (int64 or float64 by path)
	last  uint64  // bits of the last value
	buf   []float64
	ibuf  []int64
}

// NewAccumulator returns an empty accumulator for a.
func NewAccumulator(a *Aggregator) *Accumulator {
	c := &Accumulator{}
	c.Reset(a)
	return c
}

// Reset empties the accumulator and sets its aggregator, keeping buffers.
func (c *Accumulator) Reset(a *Aggregator) {
	// Field by field: a whole-struct store holds three pointers, which
	// costs write barriers and a typed copy per bucket (a rollup answer
	// resets once per cell).
	if c.agg != a {
		c.agg = a
	}
	c.all, c.n, c.f, c.m2, c.i, c.first, c.last = 0, 0, 0, 0, 0, 0, 0
	if len(c.buf) != 0 {
		c.buf = c.buf[:0]
	}
	if len(c.ibuf) != 0 {
		c.ibuf = c.ibuf[:0]
	}
	switch a.kind {
	case kMin:
		c.f, c.i = math.Inf(1), math.MaxInt64
	case kMax:
		c.f, c.i = math.Inf(-1), math.MinInt64
	case kMult:
		c.f, c.i = 1, 1
	}
}

// Count returns how many values were added.
func (c *Accumulator) Count() int64 { return c.all }

// AddFloat adds one value on the float path.
func (c *Accumulator) AddFloat(v float64) {
	if c.all == 0 {
		c.first = math.Float64bits(v)
	}
	c.all++
	c.last = math.Float64bits(v)
	nan := v != v
	switch c.agg.kind {
	case kSum, kAvg:
		if !nan {
			c.f += v
			c.n++
		}
	case kSquareSum:
		if !nan {
			c.f += v * v
			c.n++
		}
	case kMin:
		if !nan && v < c.f {
			c.f = v
		}
	case kMax:
		if !nan && v > c.f {
			c.f = v
		}
	case kCount:
		if !nan {
			c.n++
		}
	case kMult:
		c.f *= v
	default:
		c.addFloatSlow(v, nan)
	}
}

// AddFloats adds values in order on the float path, as that many AddFloat
// calls would, with one dispatch for the common aggregators.
func (c *Accumulator) AddFloats(values []float64) {
	if len(values) == 0 {
		return
	}
	switch c.agg.kind {
	case kSum, kAvg:
		c.f, c.n = sumFloats(values, c.f, c.n)
	case kMin:
		for _, v := range values {
			if v < c.f { // false for NaN
				c.f = v
			}
		}
	case kMax:
		for _, v := range values {
			if v > c.f {
				c.f = v
			}
		}
	default:
		for _, v := range values {
			c.AddFloat(v)
		}
		return
	}
	if c.all == 0 {
		c.first = math.Float64bits(values[0])
	}
	c.all += int64(len(values))
	c.last = math.Float64bits(values[len(values)-1])
}

// sumFloats adds the non-NaN values to sum, counting them, in order.
func sumFloats(values []float64, sum float64, n int64) (float64, int64) {
	for _, v := range values {
		if v == v {
			sum += v
			n++
		}
	}
	return sum, n
}

// addFloatSlow covers the aggregators that keep more state than a scalar.
func (c *Accumulator) addFloatSlow(v float64, nan bool) {
	if nan {
		return
	}
	switch c.agg.kind {
	case kDev:
		c.welford(v)
	case kMedian, kPercentile:
		c.buf = append(c.buf, v)
	}
}

// welford is one step of StdDev's running mean and squared deviation; the
// first value only seeds the mean.
func (c *Accumulator) welford(x float64) {
	c.n++
	if c.n == 1 {
		c.f = x
		return
	}
	mean := c.f + (x-c.f)/float64(c.n)
	c.m2 += (x - c.f) * (x - mean)
	c.f = mean
}

// Float returns the float-path aggregate; NaN when nothing countable was
// added (except count, which is 0, and mult, which is 1).
func (c *Accumulator) Float() float64 {
	switch c.agg.kind {
	case kSum, kSquareSum:
		return nanIfZero(c.n, c.f)
	case kAvg:
		return nanIfZero(c.n, c.f/float64(c.n))
	case kMin, kMax:
		if math.IsInf(c.f, 0) {
			return math.NaN()
		}
		return c.f
	case kCount:
		return float64(c.n)
	case kMult:
		return c.f
	}
	return c.floatSlow()
}

// floatOne returns what Reset(a), AddFloat(v) and Float give, without
// touching an accumulator, for the aggregators where that is a test or
// two (sum and avg turn -0 into 0; min and max answer NaN for an
// infinity, their empty start); ok is false for the others. GroupBy uses it
// for a group of one series.
func floatOne(a *Aggregator, v float64) (f float64, ok bool) {
	switch a.kind {
	case kSum, kAvg:
		if v != v {
			return math.NaN(), true
		}
		return v + 0, true
	case kMin, kMax:
		if v != v || math.IsInf(v, 0) {
			return math.NaN(), true
		}
		return v, true
	}
	return 0, false
}

func (c *Accumulator) floatSlow() float64 {
	if c.all == 0 {
		return math.NaN()
	}
	first, last := math.Float64frombits(c.first), math.Float64frombits(c.last)
	switch c.agg.kind {
	case kDev:
		return devResult(c.n, c.m2)
	case kMedian:
		return median(c.buf)
	case kPercentile:
		// The double path of PercentileAgg ignores the estimation type.
		return percentile(c.buf, c.agg.pct, Legacy)
	case kFirst, kNone:
		return first
	case kLast:
		return last
	case kDiff:
		return last - first
	}
	return math.NaN()
}

// devResult is StdDev's result for n values: NaN for none, 0 for one,
// otherwise sqrt(M2/n).
func devResult(n int64, m2 float64) float64 {
	switch n {
	case 0:
		return math.NaN()
	case 1:
		return 0
	}
	return math.Sqrt(m2 / float64(n))
}

func nanIfZero(n int64, v float64) float64 {
	if n == 0 {
		return math.NaN()
	}
	return v
}

// median is the upper median: the element at len/2 after Java's sort.
func median(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	slices.SortFunc(values, javaCompare)
	return values[len(values)/2]
}

// AddInt adds one value on the integer path.
func (c *Accumulator) AddInt(v int64) {
	if c.all == 0 {
		c.first = uint64(v)
	}
	c.all++
	c.last = uint64(v)
	switch c.agg.kind {
	case kSum, kAvg:
		c.i += v
	case kSquareSum:
		c.i += v * v
	case kMin:
		c.i = min(c.i, v)
	case kMax:
		c.i = max(c.i, v)
	case kMult:
		c.i *= v
	case kDev:
		c.welford(float64(v))
	case kMedian:
		c.ibuf = append(c.ibuf, v)
	case kPercentile:
		c.buf = append(c.buf, float64(v))
	}
}

// Int returns the integer-path aggregate (0 when nothing was added).
func (c *Accumulator) Int() int64 {
	if c.all == 0 {
		return 0
	}
	first, last := int64(c.first), int64(c.last)
	switch c.agg.kind {
	case kSum, kSquareSum, kMin, kMax, kMult:
		return c.i
	case kAvg:
		return c.i / c.all
	case kCount:
		return c.all
	case kDev:
		return javaLong(devResult(c.n, c.m2))
	case kMedian:
		slices.SortFunc(c.ibuf, cmpInt64)
		return c.ibuf[len(c.ibuf)/2]
	case kPercentile:
		return javaLong(percentile(c.buf, c.agg.pct, c.agg.est))
	case kFirst, kNone:
		return first
	case kLast:
		return last
	case kDiff:
		return last - first
	}
	return 0
}
