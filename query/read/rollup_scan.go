package read

import (
	"context"
	"sync"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// scanCells is the scan plan of VisitCells, for a selection that is most
// of its metric: one scan of the rollup table per salt bucket over
// [bucket][metric][rollup base of the start] to the end, the buckets on
// the Reader's workers (forBuckets, as the core's scan plan), keeping
// the selected series' usable cells; then each series' cells merged with
// its raw ones go to the visitor, on the caller's goroutine.
func (cs *cellStream) scanCells(ctx context.Context) error {
	sel := cs.sel
	stored := make([][]rollup.Cell, len(sel.Series))
	room := cs.cellRoom()
	if slab := getCellSlab(len(sel.Series), room); slab != nil {
		defer cellSlabs.Put(slab)
		for i := range stored {
			stored[i] = (*slab)[i*room : i*room : (i+1)*room]
		}
	}
	if err := cs.r.forBuckets(ctx, &cellScan{cs: cs, ids: selectionIDs(nil, sel), stored: stored}); err != nil {
		return err
	}
	var buf []rollup.Cell
	for i := range sel.Series {
		cells := stored[i]
		if raw := cs.rc.cells[i]; len(raw) > 0 {
			buf = mergeCells(buf[:0], cells, raw)
			cells = buf
		}
		cs.cells.Add(int64(len(stored[i])))
		if len(cells) == 0 {
			continue
		}
		if err := cs.v.Cells(i, cells); err != nil {
			return err
		}
	}
	return nil
}

// maxSlabCells bounds the cells of a pooled slab (cellSlabs): 15 MiB.
const maxSlabCells = 1 << 17

// cellSlabs holds the slabs scanCells cuts its series' cell lists from
// (*[]rollup.Cell): a month of 1h cells for 100 series is 8 MiB, which
// allocating (and zeroing) again for every query cost more than
// decoding the cells.
var cellSlabs sync.Pool

// getCellSlab returns a pooled slab of at least n·room cells, nil when
// that is more than maxSlabCells (the series' lists are then allocated
// as their first rows arrive). Put it back when no list cut from it is
// used any more.
func getCellSlab(n, room int) *[]rollup.Cell {
	if n*room > maxSlabCells {
		return nil
	}
	slab, _ := cellSlabs.Get().(*[]rollup.Cell)
	if slab == nil {
		slab = new([]rollup.Cell)
	}
	if cap(*slab) < n*room {
		*slab = make([]rollup.Cell, n*room)
	}
	*slab = (*slab)[:cap(*slab)]
	return slab
}

// maxCellPrealloc bounds the cells a series' list is made room for
// before its rows are read: a range of at most this many intervals
// appends without growing.
const maxCellPrealloc = 4096

// cellRoom is the room a series' stored cells are given on its first row:
// the intervals of the selection's range, at most maxCellPrealloc.
func (cs *cellStream) cellRoom() int {
	step := cs.iv.Seconds * 1000
	n := (cs.sel.End-cs.sel.Start)/step + 2
	return int(min(max(n, 1), maxCellPrealloc))
}

// cellScan is the scan plan's state: a task over the salt buckets,
// each scanned by the core's bucket scan (Reader.scanTable) into this
// sink, which appends each selected series' usable cells to stored[i]
// (a series lives in one bucket, so no two workers share an entry).
type cellScan struct {
	cs     *cellStream
	ids    map[string]int32
	stored [][]rollup.Cell
}

// run scans bucket b's rollup rows of the selection's metric from the
// rollup base of its start.
func (sc *cellScan) run(ctx context.Context, rr *rowReader, b int) error {
	cs := sc.cs
	base0 := cs.iv.BaseTime(floorDivMs(cs.sel.Start))
	return cs.r.scanTable(ctx, rr, cs.tbl, b, base0*1000, cs.sel.End, cs.sel, sc.ids, sc)
}

// cells implements scanSink: a row's usable cells, once its last batch
// is in (rowReader.gather).
func (sc *cellScan) cells(rr *rowReader, id int32, base int64, batch []rowkey.Cell, first, last bool) error {
	cells, ok := rr.gather(batch, first, last)
	if !ok {
		return nil
	}
	cs := sc.cs
	cs.rows.Add(1)
	stored := sc.stored
	if stored[id] == nil {
		// One allocation for the series instead of a dozen
		// doublings of a month of 1h cells.
		stored[id] = make([]rollup.Cell, 0, cs.cellRoom())
	}
	n := len(stored[id])
	stored[id] = cs.worker(rr).usable(stored[id], base, cells)
	return cs.sel.Budget.AddPoints(len(stored[id]) - n)
}

// usable appends to dst the cells of a rollup row at base that lie whole
// in the range outside the raw units.
func (w *cellWorker) usable(dst []rollup.Cell, base int64, cells []storage.Cell) []rollup.Cell {
	cs := w.cs
	n := len(dst)
	dst = w.decodeRow(dst, base, cells)
	step := cs.iv.Seconds * 1000
	if len(dst) == n || !covered(cs.raw, cs.sel, dst[n].T, dst[len(dst)-1].T+step-1) {
		return dst // the row's cells all lie in the range, outside the raw units
	}
	keep := dst[:n]
	for _, c := range dst[n:] {
		if !covered(cs.raw, cs.sel, c.T, c.T+step-1) {
			keep = append(keep, c)
		}
	}
	return keep
}

// mergeCells appends the union of stored and raw, two sorted lists that
// never share an interval, to dst in time order.
func mergeCells(dst, stored, raw []rollup.Cell) []rollup.Cell {
	j := 0
	for _, c := range stored {
		for j < len(raw) && raw[j].T < c.T {
			dst = append(dst, raw[j])
			j++
		}
		dst = append(dst, c)
	}
	return append(dst, raw[j:]...)
}
