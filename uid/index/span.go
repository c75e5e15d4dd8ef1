package index

import "math"

// span is a closed range of hours (hours since the epoch) holding a series'
// data: first is a lower bound and last an upper bound. It is empty when
// first > last: the series' hours are unknown, and a planner must never skip
// it.
type span struct{ first, last uint32 }

// noSpan is the empty span, the identity of merge.
var noSpan = span{first: math.MaxUint32}

func (s span) empty() bool { return s.first > s.last }

// merge returns the smallest span covering s and o.
func (s span) merge(o span) span {
	return span{first: min(s.first, o.first), last: max(s.last, o.last)}
}

// hourOf returns the hour of a millisecond timestamp, clamped to the hours
// a row key can hold.
func hourOf(ms int64) uint32 {
	if ms < 0 {
		return 0
	}
	return uint32(min(ms/3_600_000, maxHour))
}

// spanOf returns the hours of [firstMs, lastMs] (swapped if reversed).
func spanOf(firstMs, lastMs int64) span {
	a, b := hourOf(firstMs), hourOf(lastMs)
	return span{first: min(a, b), last: max(a, b)}
}
