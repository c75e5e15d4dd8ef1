package agg

import "math"

// javaLong converts f as Java's (long) cast does: NaN is 0, values beyond
// the int64 range saturate, everything else truncates toward zero. Go's
// conversion leaves the out-of-range cases undefined.
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaCompare orders floats as Java's Double.compare: -0 before +0 and NaN
// after everything; the sort of a median must match Collections.sort.
func javaCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := javaBits(a), javaBits(b)
	switch {
	case ab < bb:
		return -1
	case ab > bb:
		return 1
	}
	return 0
}

// javaBits is Double.doubleToLongBits as a signed integer, with every NaN
// collapsed to the canonical one.
func javaBits(f float64) int64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(f))
}

// cmpInt64 orders int64 for slices.SortFunc.
func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
