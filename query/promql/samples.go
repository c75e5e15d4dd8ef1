package promql

import (
	"cmp"
	"slices"

	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// samplesIter walks samples already in Prometheus's form (the windows a
// Select evaluated from rollup cells): the cheapest iterator for the
// engine to walk, no conversion and no interface call per sample.
type samplesIter = samplesIterator[int64]

// samplesIterator is samplesIter; T as in iterator.
type samplesIterator[T ~int64] struct {
	s []sample // sorted by t, no duplicates
	i int
	sample
}

var _ chunkenc.Iterator = (*samplesIter)(nil)

// reset makes it walk s from its start.
func (it *samplesIterator[T]) reset(s []sample) {
	it.s, it.i, it.sample = s, -1, sample{}
}

// Next implements chunkenc.Iterator.
func (it *samplesIterator[T]) Next() chunkenc.ValueType {
	if it.i+1 >= len(it.s) {
		it.i = len(it.s)
		return chunkenc.ValNone
	}
	it.i++
	it.sample = it.s[it.i]
	return chunkenc.ValFloat
}

// Seek implements chunkenc.Iterator: no move when the current sample is at
// or after t.
func (it *samplesIterator[T]) Seek(t T) chunkenc.ValueType {
	switch {
	case it.i >= len(it.s):
		return chunkenc.ValNone
	case it.i >= 0 && it.t >= int64(t):
		return chunkenc.ValFloat
	}
	j := max(it.i, 0)
	k, _ := slices.BinarySearchFunc(it.s[j:], int64(t), cmpSampleTime)
	if it.i = j + k; it.i >= len(it.s) {
		return chunkenc.ValNone
	}
	it.sample = it.s[it.i]
	return chunkenc.ValFloat
}

func cmpSampleTime(s sample, t int64) int { return cmp.Compare(s.t, t) }

// Err implements chunkenc.Iterator.
func (*samplesIterator[T]) Err() error { return nil }
