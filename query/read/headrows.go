package read

import (
	"encoding/binary"
	"math"

	"github.com/tsd-db/tsd/internal/series"
)

// headCells is the cell count of a head row's row cache entry: no stored
// row has it, so a head entry and a stored one never answer for each
// other even under one fingerprint.
const headCells = -1

// loadHeadRows reads the head's rows of tsuid that may hold points in
// [start, end] into rr.hrows.
func (rr *rowReader) loadHeadRows(tsuid []byte, start, end int64) {
	rr.hrows = rr.hrows[:0]
	if h := rr.r.opts.Head; h != nil {
		rr.hrows = h.AppendRows(rr.hrows, tsuid, start, maxtOf(end))
	}
}

// maxtOf is the exclusive bound of an inclusive end.
func maxtOf(end int64) int64 {
	if end == math.MaxInt64 {
		return end
	}
	return end + 1
}

// headRow returns every point of the head row ref of rr.tsuid, charged to
// b: the row cache's (read-only; entry is its entry) when it holds the
// row at ref's fingerprint, else decoded into rr.head and offered to the
// cache under the fingerprint taken with them. No points when the row
// left the head since ref was taken: the store has it then.
func (rr *rowReader) headRow(ref series.RowRef, b *Budget) (pts []series.Point, entry *cacheEntry, err error) {
	c := rr.r.cache
	if c != nil {
		rr.hkey = binary.BigEndian.AppendUint64(append(rr.hkey[:0], rr.tsuid...), uint64(ref.Base))
		if e := c.entry(ref.FP, rr.hkey, headCells); e != nil {
			return e.pts, e, b.AddPoints(len(e.pts))
		}
	}
	pts, fp, ok := rr.r.opts.Head.AppendRowPoints(rr.head[:0], rr.tsuid, ref.Base)
	rr.head = pts[:0]
	if !ok {
		return nil, nil, nil
	}
	if c != nil {
		c.add(fp, rr.hkey, headCells, pts)
	}
	return pts, nil, b.AddPoints(len(pts))
}
