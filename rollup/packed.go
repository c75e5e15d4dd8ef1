package rollup

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// PackedQualifier is the qualifier of the one column a rollup row has in
// tsd's dense format: a single byte that no OpenTSDB rollup qualifier (an
// aggregator id 0..127, or an ASCII "<agg>:" prefix) starts with.
const PackedQualifier = "\xFD"

// The first byte of a packed value. packedV3 is what RowEncoder writes:
// the cells one after the other in varints (packed_v3 below). packedV1 and
// packedV2, written before, hold the aggregates as entropy-coded dense
// columns (packed_dense.go): packedV1 the four aggregate sections only
// (its cells decode with EdgeUnknown), packedV2 a fifth section with the
// cells' first points. Readers decode all three.
const (
	packedV1 = 1
	packedV2 = 2
	packedV3 = 3
)

// RowEncoder encodes a rollup row's cells as one packed value. The zero
// value is ready; reuse one to encode without allocating.
type RowEncoder struct {
	idx []int
}

// Append appends the packed value of cells, the cells of iv in the row
// starting at base (sorted by T, distinct, 1..iv.Count of them, each with
// points), to dst:
//
//	03          version
//	uvarint n   the number of cells
//	index runs  until they cover the n cells: uvarint gap (the indexes
//	            skipped since the previous run's end, the first run's
//	            counted from index 0) ‖ uvarint length (>= 1); a run is
//	            cells at consecutive interval indexes
//	shape runs  until they cover the n cells: h, a cell column's header
//	            byte (AppendCellValue: the kinds of sum, min and max, the
//	            Edge) ‖ the kind of the first point when h's Edge is 2,
//	            else 0 ‖ uvarint length (>= 1)
//	the cells   in index order, each: count as the zigzag varint of its
//	            difference from the previous cell's (0 before the
//	            first); then sum, min, max and, when its Edge is 2, the
//	            first point, each an integer as the zigzag varint of its
//	            difference from the previous integer of that field (0
//	            before the first), a float32 on 4 bytes, a float64 on 8,
//	            big-endian
//
// A row's cells usually share one shape and consecutive indexes, so the
// runs cost a few bytes and a steady integer series' cell about six (an
// entropy-coded form, versions 01 and 02, was a third of that and five
// times slower to read back: queries read these rows, see
// docs/formats.md).
func (e *RowEncoder) Append(dst []byte, iv *Interval, base int64, cells []Cell) ([]byte, error) {
	if len(cells) == 0 || len(cells) > iv.Count {
		return dst, invalidf("packed row of %d cells, want 1..%d", len(cells), iv.Count)
	}
	if err := e.indexes(iv, base, cells); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, packedV3)
	dst = binary.AppendUvarint(dst, uint64(len(cells)))
	dst = e.appendIndexRuns(dst)
	dst, err := appendShapeRuns(dst, cells)
	if err != nil {
		return dst[:start], err
	}
	var prev [5]int64 // count, sum, min, max, first
	for i := range cells {
		c := &cells[i]
		dst = binary.AppendVarint(dst, c.Count-prev[0])
		prev[0] = c.Count
		dst = appendDelta(dst, c.Sum, &prev[1])
		dst = appendDelta(dst, c.Min, &prev[2])
		dst = appendDelta(dst, c.Max, &prev[3])
		if c.Edge == EdgePoint {
			dst = appendDelta(dst, c.First, &prev[4])
		}
	}
	return dst, nil
}

// indexes checks cells and keeps their interval indexes in e.idx.
func (e *RowEncoder) indexes(iv *Interval, base int64, cells []Cell) error {
	e.idx = e.idx[:0]
	for i := range cells {
		c := &cells[i]
		idx := iv.Index(base, floorDiv(c.T, 1000))
		if idx < 0 || idx >= iv.Count || iv.CellStart(base, idx) != c.T || c.Count <= 0 {
			return invalidf("cell at %d ms is not a filled cell of the %s row at %d", c.T, iv.Name, base)
		}
		if n := len(e.idx); n > 0 && idx <= e.idx[n-1] {
			return invalidf("packed row: cell at %d ms out of order", c.T)
		}
		e.idx = append(e.idx, idx)
	}
	return nil
}

// appendIndexRuns appends the runs of consecutive indexes of e.idx.
func (e *RowEncoder) appendIndexRuns(dst []byte) []byte {
	next := 0
	for i := 0; i < len(e.idx); {
		j := i + 1
		for j < len(e.idx) && e.idx[j] == e.idx[j-1]+1 {
			j++
		}
		dst = binary.AppendUvarint(dst, uint64(e.idx[i]-next))
		dst = binary.AppendUvarint(dst, uint64(j-i))
		next, i = e.idx[j-1]+1, j
	}
	return dst
}

// cellShape is a cell's header byte (AppendCellValue's) and its first
// point's kind (0 without one).
type cellShape [2]byte

func shapeOf(c *Cell) (cellShape, error) {
	for _, k := range [...]series.Kind{c.Sum.Kind, c.Min.Kind, c.Max.Kind} {
		if k > series.Float64 {
			return cellShape{}, invalidf("cell at %d ms: value kind %d", c.T, k)
		}
	}
	edge := c.Edge
	if edge > EdgePoint {
		edge = EdgeUnknown
	}
	s := cellShape{byte(c.Sum.Kind) | byte(c.Min.Kind)<<2 | byte(c.Max.Kind)<<4 | byte(edge)<<6}
	if edge == EdgePoint {
		if c.First.Kind > series.Float64 {
			return cellShape{}, invalidf("cell at %d ms: first point kind %d", c.T, c.First.Kind)
		}
		s[1] = byte(c.First.Kind)
	}
	return s, nil
}

// appendShapeRuns appends the runs of cells sharing a shape.
func appendShapeRuns(dst []byte, cells []Cell) ([]byte, error) {
	for i := 0; i < len(cells); {
		s, err := shapeOf(&cells[i])
		if err != nil {
			return dst, err
		}
		j := i + 1
		for ; j < len(cells); j++ {
			if t, err := shapeOf(&cells[j]); err != nil || t != s {
				break
			}
		}
		dst = append(dst, s[0], s[1])
		dst = binary.AppendUvarint(dst, uint64(j-i))
		i = j
	}
	return dst, nil
}

// appendDelta appends p: an integer as the zigzag varint of its
// difference from *prev (which it becomes), a float by its kind.
func appendDelta(dst []byte, p series.Point, prev *int64) []byte {
	switch p.Kind {
	case series.Int:
		x := int64(p.Bits)
		dst = binary.AppendVarint(dst, x-*prev)
		*prev = x
		return dst
	case series.Float32:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(math.Float64frombits(p.Bits))))
	}
	return binary.BigEndian.AppendUint64(dst, p.Bits)
}

// RowDecoder decodes packed values. The zero value is ready; reuse one to
// decode without allocating.
type RowDecoder struct {
	it        rowkey.DenseIter // versions 01 and 02
	pts       []series.Point
	idxRuns   []indexRun // version 03
	shapeRuns []shapeRun
}

// Decode appends the cells of the packed value of iv's row starting at
// base to dst, sorted by T.
func (d *RowDecoder) Decode(dst []Cell, iv *Interval, base int64, value []byte) ([]Cell, error) {
	if len(value) == 0 {
		return dst, corruptf("packed rollup value: empty")
	}
	switch value[0] {
	case packedV3:
		return d.decodeV3(dst, iv, base, value[1:])
	case packedV1, packedV2:
		return d.decodeDense(dst, iv, base, value)
	}
	return dst, corruptf("packed rollup value: unknown version %d", value[0])
}

// decodeV3 appends the cells of a version 03 value (v after its version
// byte) of iv's row at base to dst. The runs are read first, then each
// cell is written whole as its values are read.
func (d *RowDecoder) decodeV3(dst []Cell, iv *Interval, base int64, v []byte) ([]Cell, error) {
	n0 := len(dst)
	n, k := binary.Uvarint(v)
	if k <= 0 || n == 0 || n > uint64(iv.Count) {
		return dst, corruptf("packed rollup value: bad cell count")
	}
	v, err := d.readIndexRuns(iv.Count, int(n), v[k:])
	if err != nil {
		return dst, err
	}
	if v, err = d.readShapeRuns(int(n), v); err != nil {
		return dst, err
	}
	dst = slices.Grow(dst, int(n))
	var prev [5]int64 // count, sum, min, max, first
	ir, sr := 0, 0    // the current index and shape runs
	idx, left := d.idxRuns[0].idx, d.idxRuns[0].n
	shape, sleft := d.shapeRuns[0].s, d.shapeRuns[0].n
	for i := range int(n) {
		if left == 0 {
			ir++
			idx, left = d.idxRuns[ir].idx, d.idxRuns[ir].n
		}
		if sleft == 0 {
			sr++
			shape, sleft = d.shapeRuns[sr].s, d.shapeRuns[sr].n
		}
		t := iv.CellStart(base, idx)
		h := shape[0]
		dst = dst[:len(dst)+1] // grown above; filled in place (a Cell is 120 bytes)
		c := &dst[len(dst)-1]
		*c = Cell{T: t, Edge: Edge(h >> 6),
			Sum: series.Point{T: t, Kind: series.Kind(h & 3)}, Min: series.Point{T: t, Kind: series.Kind(h >> 2 & 3)},
			Max: series.Point{T: t, Kind: series.Kind(h >> 4 & 3)}}
		u, k := binary.Uvarint(v)
		c.Count = prev[0] + unzigzag(u)
		if k <= 0 || c.Count <= 0 {
			return dst[:n0], corruptf("packed rollup value: bad count at cell %d", i)
		}
		prev[0], v = c.Count, v[k:]
		ps := [4]*series.Point{&c.Sum, &c.Min, &c.Max, &c.First}
		nf := 3
		if c.Edge == EdgePoint {
			c.First = series.Point{T: t, Kind: series.Kind(shape[1])}
			nf = 4
		}
		for f, p := range ps[:nf] {
			if p.Kind != series.Int {
				if v, k = readFloat(p, v); k == 0 {
					return dst[:n0], corruptf("packed rollup value: cell %d truncated", i)
				}
				continue
			}
			if u, k = binary.Uvarint(v); k <= 0 {
				return dst[:n0], corruptf("packed rollup value: cell %d truncated", i)
			}
			prev[f+1] += unzigzag(u)
			p.Bits, v = uint64(prev[f+1]), v[k:]
		}
		idx, left, sleft = idx+1, left-1, sleft-1
	}
	if len(v) != 0 {
		return dst[:n0], corruptf("packed rollup value: %d bytes after the cells", len(v))
	}
	return dst, nil
}

// indexRun is n cells at consecutive interval indexes from idx.
type indexRun struct{ idx, n int }

// shapeRun is n cells of one shape.
type shapeRun struct {
	s cellShape
	n int
}

// readIndexRuns reads into d.idxRuns the index runs at the head of v,
// covering n cells of a row of count intervals, and returns what follows
// them.
func (d *RowDecoder) readIndexRuns(count, n int, v []byte) ([]byte, error) {
	d.idxRuns = d.idxRuns[:0]
	next := 0
	for got := 0; got < n; {
		gap, k := binary.Uvarint(v)
		if k <= 0 {
			return v, corruptf("packed rollup value: index runs truncated")
		}
		l, k2 := binary.Uvarint(v[k:])
		if k2 <= 0 || l == 0 || l > uint64(n-got) || gap > uint64(count-next) || int(gap+l) > count-next {
			return v, corruptf("packed rollup value: bad index run")
		}
		v = v[k+k2:]
		d.idxRuns = append(d.idxRuns, indexRun{next + int(gap), int(l)})
		next, got = next+int(gap+l), got+int(l)
	}
	return v, nil
}

// readShapeRuns reads into d.shapeRuns the shape runs at the head of v,
// covering n cells, and returns what follows them.
func (d *RowDecoder) readShapeRuns(n int, v []byte) ([]byte, error) {
	d.shapeRuns = d.shapeRuns[:0]
	for got := 0; got < n; {
		if len(v) < 3 {
			return v, corruptf("packed rollup value: shape runs truncated")
		}
		h, fk := v[0], v[1]
		l, k := binary.Uvarint(v[2:])
		edge := Edge(h >> 6)
		if k <= 0 || l == 0 || l > uint64(n-got) || h&3 > 2 || h>>2&3 > 2 || h>>4&3 > 2 || edge > EdgePoint ||
			fk > byte(series.Float64) || (edge != EdgePoint && fk != 0) {
			return v, corruptf("packed rollup value: bad shape run")
		}
		v = v[2+k:]
		d.shapeRuns = append(d.shapeRuns, shapeRun{cellShape{h, fk}, int(l)})
		got += int(l)
	}
	return v, nil
}

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// readFloat reads the value of the float point *p, whose Kind is set, at
// the head of v and returns what follows it; k is 0 when v is too short.
func readFloat(p *series.Point, v []byte) (rest []byte, k int) {
	if p.Kind == series.Float32 {
		if len(v) < 4 {
			return v, 0
		}
		p.Bits = math.Float64bits(float64(math.Float32frombits(binary.BigEndian.Uint32(v))))
		return v[4:], 4
	}
	if len(v) < 8 {
		return v, 0
	}
	p.Bits = binary.BigEndian.Uint64(v)
	return v[8:], 8
}
