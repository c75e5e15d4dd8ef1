package rollup

import (
	"encoding/binary"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// PackedQualifier is the qualifier of the one column a rollup row has in
// tsd's dense format: a single byte that no OpenTSDB rollup qualifier (an
// aggregator id 0..127, or an ASCII "<agg>:" prefix) starts with.
const PackedQualifier = "\xFD"

// The first byte of a packed value: packedV1 has the four aggregate
// sections only (its cells decode with EdgeUnknown), packedV2 a fifth
// section with the cells' first points.
const (
	packedV1 = 1
	packedV2 = 2
)

// RowEncoder encodes a rollup row's cells as one packed value. The zero
// value is ready; reuse one to encode without allocating.
type RowEncoder struct {
	enc rowkey.DenseEncoder
	pts []series.Point
	sec []byte
}

// Append appends the packed value of cells, the cells of iv in the row
// starting at base (sorted by T, distinct, 1..iv.Count of them), to dst:
//
//	02                      version
//	4 sections, in the order sum, count, min, max:
//	  uvarint length ‖ a dense column (rowkey.DenseEncoder) whose points
//	  sit at millisecond idx of a row based at 0, idx being the cell's
//	  interval index, and whose values are the aggregate
//	a fifth section, first: uvarint length ‖ a dense column of the
//	  point at each cell's start, for the cells that have one (length 0
//	  for none); the others have none (EdgeNone)
//
// Indexes are small and usually consecutive, so each section's times cost
// a few header bytes and the values their dense coding. When a cell's
// Edge is EdgeUnknown (folded from cells of an older encoding) the row
// is written as version 01, the four sections alone, and every cell
// reads back with EdgeUnknown.
func (e *RowEncoder) Append(dst []byte, iv *Interval, base int64, cells []Cell) ([]byte, error) {
	if len(cells) == 0 || len(cells) > iv.Count {
		return dst, invalidf("packed row of %d cells, want 1..%d", len(cells), iv.Count)
	}
	start := len(dst)
	version := byte(packedV2)
	for i := range cells {
		if cells[i].Edge != EdgeNone && cells[i].Edge != EdgePoint {
			version = packedV1
		}
	}
	dst = append(dst, version)
	for a := range NumAggs {
		e.pts = e.pts[:0]
		for i := range cells {
			c := &cells[i]
			idx := iv.Index(base, floorDiv(c.T, 1000))
			if idx < 0 || idx >= iv.Count || iv.CellStart(base, idx) != c.T || c.Count <= 0 {
				return dst[:start], invalidf("cell at %d ms is not a filled cell of the %s row at %d", c.T, iv.Name, base)
			}
			p := c.Value(a)
			p.T = int64(idx)
			e.pts = append(e.pts, p)
		}
		var err error
		e.sec, err = e.enc.Append(e.sec[:0], 0, e.pts)
		if err != nil {
			return dst[:start], invalidf("packed row: %v", err)
		}
		dst = binary.AppendUvarint(dst, uint64(len(e.sec)))
		dst = append(dst, e.sec...)
	}
	if version == packedV1 {
		return dst, nil
	}
	e.pts = e.pts[:0]
	for i := range cells {
		if c := &cells[i]; c.Edge == EdgePoint {
			p := c.First
			p.T = int64(iv.Index(base, floorDiv(c.T, 1000)))
			e.pts = append(e.pts, p)
		}
	}
	e.sec = e.sec[:0]
	if len(e.pts) > 0 {
		var err error
		if e.sec, err = e.enc.Append(e.sec, 0, e.pts); err != nil {
			return dst[:start], invalidf("packed row: first points: %v", err)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.sec)))
	return append(dst, e.sec...), nil
}

// RowDecoder decodes packed values. The zero value is ready; reuse one to
// decode without allocating.
type RowDecoder struct {
	it  rowkey.DenseIter
	pts []series.Point
}

// Decode appends the cells of the packed value of iv's row starting at
// base to dst, sorted by T.
func (d *RowDecoder) Decode(dst []Cell, iv *Interval, base int64, value []byte) ([]Cell, error) {
	n0 := len(dst)
	if len(value) == 0 || (value[0] != packedV1 && value[0] != packedV2) {
		return dst, corruptf("packed rollup value: unknown version")
	}
	rest := value[1:]
	for a := range NumAggs {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return dst[:n0], corruptf("packed rollup value: section %s truncated", a)
		}
		sec := rest[k : k+int(l)]
		rest = rest[k+int(l):]
		var err error
		d.pts, err = d.it.DecodeDense(d.pts[:0], 0, sec)
		if err != nil {
			return dst[:n0], corruptf("packed rollup value: section %s: %v", a, err)
		}
		if a == Sum {
			for _, p := range d.pts {
				if p.T >= int64(iv.Count) {
					return dst[:n0], corruptf("packed rollup value: index %d beyond the %d intervals of %s", p.T, iv.Count, iv.Name)
				}
				dst = append(dst, Cell{T: iv.CellStart(base, int(p.T))})
			}
		} else if len(d.pts) != len(dst)-n0 {
			return dst[:n0], corruptf("packed rollup value: section %s has %d cells, sum has %d", a, len(d.pts), len(dst)-n0)
		}
		if err := fill(dst[n0:], a, d.pts, iv, base); err != nil {
			return dst[:n0], err
		}
	}
	if value[0] == packedV2 {
		var err error
		if rest, err = d.firsts(dst[n0:], iv, base, rest); err != nil {
			return dst[:n0], err
		}
	}
	if len(rest) != 0 {
		return dst[:n0], corruptf("packed rollup value: %d bytes after the sections", len(rest))
	}
	return dst, nil
}

// firsts decodes the first-point section at the head of rest into cells
// and returns what follows it.
func (d *RowDecoder) firsts(cells []Cell, iv *Interval, base int64, rest []byte) ([]byte, error) {
	l, k := binary.Uvarint(rest)
	if k <= 0 || l > uint64(len(rest)-k) {
		return rest, corruptf("packed rollup value: section first truncated")
	}
	sec := rest[k : k+int(l)]
	rest = rest[k+int(l):]
	for i := range cells {
		cells[i].Edge = EdgeNone
	}
	if len(sec) == 0 {
		return rest, nil
	}
	var err error
	d.pts, err = d.it.DecodeDense(d.pts[:0], 0, sec)
	if err != nil {
		return rest, corruptf("packed rollup value: section first: %v", err)
	}
	j := 0
	for _, p := range d.pts {
		t := iv.CellStart(base, int(p.T))
		for j < len(cells) && cells[j].T < t {
			j++
		}
		if p.T >= int64(iv.Count) || j == len(cells) || cells[j].T != t {
			return rest, corruptf("packed rollup value: first point at index %d of no cell", p.T)
		}
		p.T = t
		cells[j].Edge, cells[j].First = EdgePoint, p
	}
	return rest, nil
}

func fill(cells []Cell, a Agg, pts []series.Point, iv *Interval, base int64) error {
	for i, p := range pts {
		c := &cells[i]
		if iv.CellStart(base, int(p.T)) != c.T {
			return corruptf("packed rollup value: section %s index %d differs from sum's", a, p.T)
		}
		p.T = c.T
		switch a {
		case Sum:
			c.Sum = p
		case Count:
			if p.Kind != series.Int || int64(p.Bits) <= 0 {
				return corruptf("packed rollup value: count %d at index %d", int64(p.Bits), iv.Index(base, c.T/1000))
			}
			c.Count = int64(p.Bits)
		case Min:
			c.Min = p
		case Max:
			c.Max = p
		}
	}
	return nil
}
