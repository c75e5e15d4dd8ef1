package agg

import (
	"math"
	"slices"
)

// percentileIndex is commons-math's EstimationType.index: the 1-based
// fractional position of quantile q (0..1) among n sorted values.
func percentileIndex(q float64, n int, e Estimation) float64 {
	switch e {
	case R3:
		if q <= 1.0/2/float64(n) {
			return 0
		}
		return math.RoundToEven(float64(n) * q)
	case R7:
		switch q {
		case 0:
			return 0
		case 1:
			return float64(n)
		}
		return 1 + float64(n-1)*q
	}
	switch q {
	case 0:
		return 0
	case 1:
		return float64(n)
	}
	return q * float64(n+1)
}

// percentileEstimate is commons-math's EstimationType.estimate over sorted
// values: below position 1 the minimum, from n the maximum, otherwise the
// linear blend of the two neighbouring order statistics.
func percentileEstimate(sorted []float64, pos float64) float64 {
	n := len(sorted)
	fpos := math.Floor(pos)
	dif := pos - fpos
	if pos < 1 {
		return sorted[0]
	}
	if pos >= float64(n) {
		return sorted[n-1]
	}
	i := int(fpos)
	lower, upper := sorted[i-1], sorted[i]
	return lower + dif*(upper-lower)
}

// percentile is Percentile(p).withEstimationType(e).evaluate(values):
// NaN for no values, the value itself for one. It sorts values in place.
func percentile(values []float64, p float64, e Estimation) float64 {
	switch len(values) {
	case 0:
		return math.NaN()
	case 1:
		return values[0]
	}
	slices.SortFunc(values, javaCompare)
	return percentileEstimate(values, percentileIndex(p/100, len(values), e))
}
