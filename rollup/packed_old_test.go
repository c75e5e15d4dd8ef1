package rollup

import (
	"encoding/binary"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// denseRowEncoder is the packed row encoder tsd used before version 03:
// versions 01 and 02 (entropy-coded dense columns, packed_dense.go). It
// lives in the tests to make the rows stores written then hold, which
// readers still decode.
type denseRowEncoder struct {
	enc rowkey.DenseEncoder
	pts []series.Point
	sec []byte
}

func (e *denseRowEncoder) Append(dst []byte, iv *Interval, base int64, cells []Cell) ([]byte, error) {
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
