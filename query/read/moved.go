package read

import "github.com/tsd-db/tsd/rowkey"

// RowMoved hands the row cache's entry of a head row on to the stored row
// a flush wrote from it (ingest/flush.RowMover): the entry of tsuid's row
// at base (ms), cached under the head's fingerprint headFP, becomes the
// entry of the stored row key with cells, and stops being a head row's,
// which the head lets go once it is written. The first read of the stored
// row then finds its points decoded: without this, a flush made the next
// refresh of a dashboard decode again every row it had just read.
//
// The two rows hold the same points: headFP names exactly the points the
// flush encoded (ingest/head.DetachedRow.FP), and a dense column decodes
// to the points it was encoded from. A stored row that holds other
// columns too (a late row's earlier ones, another writer's) fingerprints
// otherwise and is decoded as before; the handed entry then ages out
// unused, as the head row's would have.
func (r *Reader) RowMoved(tsuid []byte, base int64, headFP uint64, key []byte, cells []rowkey.Cell) {
	c := r.cache
	if c == nil {
		return
	}
	var kb [40]byte
	e := c.take(headFP, appendHeadKey(kb[:0], tsuid, base), headCells)
	if e == nil {
		return
	}
	var scratch [16]byte
	fp, _ := c.fingerprint(scratch[:0], key, cells)
	if c.rekey(e, fp, key, len(cells)) {
		r.c.moved.Add(1)
	}
}
