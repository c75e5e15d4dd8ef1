package rowkey

import (
	"github.com/tsd-db/tsd/internal/encoding/entropy"
	"github.com/tsd-db/tsd/series"
)

// First returns the first point of value, the dense cell of the row whose
// base time is baseSec, from its header alone when it can: a cell whose
// first point is not at offset 0 (then only its time is exact, which
// tells a reader asking for the point at the row's base that there is
// none), or one with regular times whose points are all in the integer
// chain (classes int, dec32, dec64: the first value is k0). ok is false
// for any other cell, which the caller decodes (Reset, Next). A reader
// of rollup cells needs the raw point at each cell's start, the first of
// a row: this reads it without decoding the row.
func (it *DenseIter) First(baseSec int64, value []byte) (p series.Point, ok bool) {
	h := header{b: value}
	h0 := h.byte1("header")
	cls := h0 & hClassMask
	n := h.uvarint(MaxDensePoints, "point count")
	t := int64(h.uvarint(RowSpanMs-1, "first offset"))
	if h.err != nil || h0&hReserved != 0 || n == 0 {
		return p, false
	}
	p.T = baseSec*1000 + t
	if t != 0 {
		return p, true
	}
	if !inChain(cls) || h0&hRegular == 0 {
		return p, false
	}
	if n >= 2 {
		h.uvarint(RowSpanMs-1, "first delta")
	}
	var d uint8
	if hasDecimals(cls) {
		if d = h.byte1("decimal exponent"); d > maxDecimals {
			return p, false
		}
	}
	k := entropy.Unzigzag(h.uvarint(1<<64-1, "first value"))
	if h.err != nil {
		return p, false
	}
	switch cls {
	case clsInt:
		if d > 0 && k%pow10i[d] != 0 {
			return p, false
		}
		p.Bits, p.Kind = uint64(k/pow10i[d]), series.Int
	case clsDec64:
		p.Bits, p.Kind = unDecimal64(k, d), series.Float64
	default:
		p.Bits, p.Kind = unDecimal32(k, d), series.Float32
	}
	return p, true
}
