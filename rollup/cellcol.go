package rollup

import (
	"encoding/binary"
	"encoding/hex"
	"math"

	"github.com/tsd-db/tsd/series"
)

// CellPrefix starts the qualifier of a cell column, tsd's dense rollup
// column: FD ‖ uint16(index), big-endian. Its odd length and high first
// byte keep it apart from OpenTSDB's rollup qualifiers (an aggregator id
// 0..127, or an ASCII "<agg>:" prefix) and from the packed column (FD
// alone).
const CellPrefix = 0xFD

// CellQualifierLen is the length of a cell column's qualifier.
const CellQualifierLen = 3

// AppendCellQualifier appends the qualifier of the cell column of
// interval index idx.
func AppendCellQualifier(dst []byte, idx int) ([]byte, error) {
	if idx < 0 || idx > math.MaxUint16 {
		return dst, invalidf("interval index %d outside 0..65535", idx)
	}
	return append(dst, CellPrefix, byte(idx>>8), byte(idx)), nil
}

// ParseCellQualifier returns the interval index of a cell column's
// qualifier, and false for any other qualifier.
func ParseCellQualifier(q []byte) (int, bool) {
	if len(q) != CellQualifierLen || q[0] != CellPrefix {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(q[1:])), true
}

// AppendCellValue appends the value of a cell column holding c:
//
//	h      1 byte: bits 0-1 the kind of sum, 2-3 of min, 4-5 of max
//	       (0 integer, 1 float32, 2 float64), bits 6-7 c.Edge (0 unknown,
//	       1 no point at the cell's start, 2 a point there)
//	count  uvarint, >= 1
//	sum, min, max in this order, each an integer as a zigzag varint,
//	       a float32 as 4 bytes or a float64 as 8 bytes, big-endian
//	first  only when bits 6-7 are 2: 1 byte, the kind of the point at
//	       the cell's start, then its value coded as sum's
//
// Values written before the first point was kept have bits 6-7 zero and
// decode with EdgeUnknown. A day of a steady integer series costs about
// ten bytes per cell.
func AppendCellValue(dst []byte, c *Cell) []byte {
	edge := c.Edge
	if edge > EdgePoint {
		edge = EdgeUnknown
	}
	dst = append(dst, byte(c.Sum.Kind)|byte(c.Min.Kind)<<2|byte(c.Max.Kind)<<4|byte(edge)<<6)
	dst = binary.AppendUvarint(dst, uint64(c.Count))
	for _, p := range [3]series.Point{c.Sum, c.Min, c.Max} {
		dst = appendCellPoint(dst, p)
	}
	if edge == EdgePoint {
		dst = append(dst, byte(c.First.Kind))
		dst = appendCellPoint(dst, c.First)
	}
	return dst
}

func appendCellPoint(dst []byte, p series.Point) []byte {
	switch p.Kind {
	case series.Int:
		return binary.AppendVarint(dst, int64(p.Bits))
	case series.Float32:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(math.Float64frombits(p.Bits))))
	}
	return binary.BigEndian.AppendUint64(dst, p.Bits)
}

// ParseCellValue decodes a cell column's value into a cell starting at t
// (ms). It does not allocate.
func ParseCellValue(t int64, v []byte) (Cell, error) {
	c := Cell{T: t}
	if len(v) < 2 || v[0]>>6 > byte(EdgePoint) {
		return c, corruptf("cell value %s: bad header", hex.EncodeToString(v))
	}
	kinds := [3]series.Kind{series.Kind(v[0] & 3), series.Kind(v[0] >> 2 & 3), series.Kind(v[0] >> 4 & 3)}
	c.Edge = Edge(v[0] >> 6)
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || n < 1 || n > math.MaxInt64 {
		return c, corruptf("cell value %s: bad count", hex.EncodeToString(v))
	}
	c.Count = int64(n)
	rest := v[1+k:]
	out := [3]*series.Point{&c.Sum, &c.Min, &c.Max}
	for i, kind := range kinds {
		var err error
		if *out[i], rest, err = parseCellPoint(t, kind, rest, v); err != nil {
			return c, err
		}
	}
	if c.Edge == EdgePoint {
		if len(rest) == 0 {
			return c, corruptf("cell value %s: no first point", hex.EncodeToString(v))
		}
		var err error
		if c.First, rest, err = parseCellPoint(t, series.Kind(rest[0]), rest[1:], v); err != nil {
			return c, err
		}
	}
	if len(rest) != 0 {
		return c, corruptf("cell value %s: %d bytes left", hex.EncodeToString(v), len(rest))
	}
	return c, nil
}

// parseCellPoint decodes one value of kind at the head of rest, a part of
// the cell value v.
func parseCellPoint(t int64, kind series.Kind, rest, v []byte) (series.Point, []byte, error) {
	p := series.Point{T: t, Kind: kind}
	switch kind {
	case series.Int:
		x, k := binary.Varint(rest)
		if k <= 0 {
			return p, rest, corruptf("cell value %s: bad integer", hex.EncodeToString(v))
		}
		p.Bits, rest = uint64(x), rest[k:]
	case series.Float32:
		if len(rest) < 4 {
			return p, rest, corruptf("cell value %s: short float32", hex.EncodeToString(v))
		}
		p.Bits, rest = math.Float64bits(float64(math.Float32frombits(binary.BigEndian.Uint32(rest)))), rest[4:]
	case series.Float64:
		if len(rest) < 8 {
			return p, rest, corruptf("cell value %s: short float64", hex.EncodeToString(v))
		}
		p.Bits, rest = binary.BigEndian.Uint64(rest), rest[8:]
	default:
		return p, rest, corruptf("cell value %s: unknown kind %d", hex.EncodeToString(v), kind)
	}
	return p, rest, nil
}
