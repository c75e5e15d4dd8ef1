package promql

import (
	"math"

	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// staleFill is a window selector's iterator when its windows' ends are
// closer together than the engine's lookback delta (rewriteWindows): it
// passes its source's samples (one per non-empty window, at the window's
// end) and adds a staleness marker at the end of each empty window that
// follows a sample within the lookback. The engine's instant selector,
// which would take that earlier sample, takes the marker and returns
// nothing for the step, as the call returned nothing for an empty window.
type staleFill = staleFillIterator[int64]

// staleFillIterator is staleFill; T as in iterator.
type staleFillIterator[T ~int64] struct {
	src      chunkenc.Iterator
	pd       *pushdown
	lookback int64
	e        int64 // the next window end to emit for
	last     int64 // the last value emitted; math.MinInt64: none
	peek     sample
	peekOK   bool // peek holds src's next sample
	srcDone  bool
	sample   // the current sample, when has
	has      bool
	done     bool
}

var _ chunkenc.Iterator = (*staleFill)(nil)

// needsStaleFill reports whether pd's windows need staleFill under the
// lookback delta lookback (ms): consecutive window ends within it.
func needsStaleFill(pd *pushdown, lookback int64) bool {
	return pd.step > 0 && pd.step < lookback
}

// reset makes it walk src, the windows of pd.
func (it *staleFillIterator[T]) reset(src chunkenc.Iterator, pd *pushdown, lookback int64) {
	*it = staleFillIterator[T]{src: src, pd: pd, lookback: lookback, e: pd.first, last: math.MinInt64}
}

// fill reads src's next sample into peek, if there is one.
func (it *staleFillIterator[T]) fill() {
	if it.peekOK || it.srcDone {
		return
	}
	if it.src.Next() == chunkenc.ValFloat {
		it.peek.t, it.peek.v = it.src.At()
		it.peekOK = true
		return
	}
	it.srcDone = true
}

// Next implements chunkenc.Iterator.
func (it *staleFillIterator[T]) Next() chunkenc.ValueType {
	for !it.done {
		it.fill()
		seen := it.last != math.MinInt64 && it.e-it.last < it.lookback
		switch {
		case it.peekOK && it.peek.t <= it.e:
			// A window with a sample (its end is it.e, as the source's
			// samples are window ends).
			it.sample, it.has, it.peekOK, it.last = it.peek, true, false, it.peek.t
			it.e = it.peek.t + it.pd.step
			return chunkenc.ValFloat
		case it.e > it.pd.last:
			it.done = true
		case seen:
			// An empty window whose step would see the last sample.
			it.sample, it.has = sample{t: it.e, v: math.Float64frombits(value.StaleNaN)}, true
			it.e += it.pd.step
			return chunkenc.ValFloat
		case it.peekOK:
			it.e = it.peek.t // no step before it sees anything
		default:
			it.done = true
		}
	}
	it.has = false
	return chunkenc.ValNone
}

// Seek implements chunkenc.Iterator: no move when the current sample is at
// or after t.
func (it *staleFillIterator[T]) Seek(t T) chunkenc.ValueType {
	if it.has && it.sample.t >= int64(t) {
		return chunkenc.ValFloat
	}
	for {
		vt := it.Next()
		if vt == chunkenc.ValNone || it.sample.t >= int64(t) {
			return vt
		}
	}
}

// Err implements chunkenc.Iterator.
func (it *staleFillIterator[T]) Err() error { return it.src.Err() }
