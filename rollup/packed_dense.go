package rollup

import (
	"encoding/binary"

	"github.com/tsd-db/tsd/series"
)

// decodeDense appends the cells of a version 01 or 02 packed value, as
// tsd wrote them before version 03, to dst:
//
//	01 or 02                version
//	4 sections, in the order sum, count, min, max:
//	  uvarint length ‖ a dense column (rowkey.DenseEncoder) whose points
//	  sit at millisecond idx of a row based at 0, idx being the cell's
//	  interval index, and whose values are the aggregate
//	version 02: a fifth section, first: uvarint length ‖ a dense column
//	  of the point at each cell's start, for the cells that have one
//	  (length 0 for none); the others have none (EdgeNone)
//
// A version 01 row's cells decode with EdgeUnknown.
func (d *RowDecoder) decodeDense(dst []Cell, iv *Interval, base int64, value []byte) ([]Cell, error) {
	n0 := len(dst)
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
