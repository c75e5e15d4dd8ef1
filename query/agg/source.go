package agg

import (
	"math"

	"github.com/tsd-db/tsd/series"
)

// point is one value on its way through a series pipeline: int64 bits, or
// float64 bits when float is set.
type point struct {
	t     int64
	bits  uint64
	float bool
}

func intPt(t, v int64) point           { return point{t: t, bits: uint64(v)} }
func floatPt(t int64, v float64) point { return point{t: t, bits: math.Float64bits(v), float: true} }

// f64 returns the value as a float64, converting an integer.
func (p point) f64() float64 {
	if p.float {
		return math.Float64frombits(p.bits)
	}
	return float64(int64(p.bits))
}

// i64 returns an integer value.
func (p point) i64() int64 { return int64(p.bits) }

// rawSource reads a series.Iterator after one SeekTime, so the first point
// comes from SeekTime and the rest from Next.
type rawSource struct {
	it      series.Iterator
	pending bool // SeekTime left an unread point under the cursor
	done    bool
}

func (r *rawSource) reset(it series.Iterator) { *r = rawSource{it: it} }

// seek positions the source on the first point at or after t.
func (r *rawSource) seek(t int64) {
	r.pending = r.it.SeekTime(t)
	r.done = !r.pending
}

// next returns the next point, or false at the end (check err).
func (r *rawSource) next() (point, bool) {
	if r.done {
		return point{}, false
	}
	if r.pending {
		r.pending = false
	} else if !r.it.Next() {
		r.done = true
		return point{}, false
	}
	p := r.it.At()
	return point{t: p.T, bits: p.Bits, float: p.Kind != series.Int}, true
}

// err returns the iterator's error.
func (r *rawSource) err() error { return r.it.Err() }
