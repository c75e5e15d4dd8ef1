package read

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/tsd-db/tsd/series"
)

// headCells is the cell count of a head row's row cache entry: no stored
// row has it, so a head entry and a stored one never answer for each
// other even under one fingerprint.
const headCells = -1

// headRow is one row of the head read for a query, before the store is:
// its points are the row cache's entry's, or a decoded copy at [lo, hi)
// of its reader's slab (head rows are read before the store, and a
// decoded copy is what survives the row leaving the head meanwhile).
type headRow struct {
	base   int64
	entry  *cacheEntry
	lo, hi int
}

// points returns the row's points; slab is the one its copy went to.
func (h *headRow) points(slab []series.Point) []series.Point {
	if h.entry != nil {
		return h.entry.pts
	}
	return slab[h.lo:h.hi]
}

// headRows are one series' head rows not yet merged, in time order.
type headRows struct {
	rows []headRow
	slab []series.Point // their decoded copies
}

// next drops the rows before hour and returns the base of the first
// left, math.MaxInt64 if none.
func (h *headRows) next(hour int64) int64 {
	for len(h.rows) > 0 && h.rows[0].base < hour {
		h.rows = h.rows[1:]
	}
	if len(h.rows) == 0 {
		return math.MaxInt64
	}
	return h.rows[0].base
}

// take returns the points in [start, end] of the first row, and its row
// cache entry, when its base is base, and drops it; else nothing.
func (h *headRows) take(base, start, end int64) ([]series.Point, *cacheEntry) {
	if len(h.rows) == 0 || h.rows[0].base != base {
		return nil, nil
	}
	hr := &h.rows[0]
	h.rows = h.rows[1:]
	return clip(hr.points(h.slab), start, end), hr.entry
}

// mergeRow is the one rule by which the head's points join the store's,
// for one hour row: store and head (each sorted, in the range) merged,
// head winning a timestamp found in both, into dst when both have
// points; else the one that has, with its row cache entry (nil when the
// result is a merge).
func mergeRow(dst, store []series.Point, sentry *cacheEntry, head []series.Point, hentry *cacheEntry) ([]series.Point, *cacheEntry) {
	switch {
	case len(head) == 0:
		return store, sentry
	case len(store) == 0:
		return head, hentry
	}
	return mergePoints(dst, store, head), nil
}

// mergePoints writes to dst[:0] the union of store and head, both sorted,
// head winning equal timestamps.
func mergePoints(dst, store, head []series.Point) []series.Point {
	dst = dst[:0]
	i, j := 0, 0
	for i < len(store) && j < len(head) {
		switch {
		case store[i].T < head[j].T:
			dst = append(dst, store[i])
			i++
		case store[i].T > head[j].T:
			dst = append(dst, head[j])
			j++
		default:
			dst = append(dst, head[j])
			i++
			j++
		}
	}
	dst = append(dst, store[i:]...)
	return append(dst, head[j:]...)
}

// readHeadRow reads the head's row ref of tsuid: from the row cache when
// it holds the row under the fingerprint the head lists it with, else
// decoded onto slab and offered to the cache under the fingerprint taken
// with the points, at once when its hour is over (recent data, which
// dashboards read again) and, while it fills, on its second sighting as
// stored rows are. ok is false for a row that left the head between
// listing and reading (the store has it by then) or has no points.
func (rr *rowReader) readHeadRow(slab []series.Point, tsuid []byte, ref series.RowRef) (_ headRow, _ []series.Point, ok bool) {
	h, c := rr.r.opts.Head, rr.r.cache
	if c != nil {
		rr.hkey = binary.BigEndian.AppendUint64(append(rr.hkey[:0], tsuid...), uint64(ref.Base))
		if e := c.entry(ref.FP, rr.hkey, headCells); e != nil {
			return headRow{base: ref.Base, entry: e}, slab, true
		}
	}
	if c != nil && ref.Base+hourMs <= rr.r.opts.Now().UnixMilli() {
		// An hour that is over enters the cache at once, decoded straight
		// into the entry's own slice: no copy, and no slab growing through
		// a large first read (fresh pages fault, at a hypervisor's cost on
		// a VM).
		pts, fp, ok := h.AppendRowPoints(make([]series.Point, 0, ref.Points), tsuid, ref.Base)
		if !ok || len(pts) == 0 {
			return headRow{}, slab, false
		}
		if e := c.adopt(fp, rr.hkey, headCells, pts); e != nil {
			return headRow{base: ref.Base, entry: e}, slab, true
		}
		lo := len(slab)
		slab = append(slab, pts...)
		return headRow{base: ref.Base, lo: lo, hi: len(slab)}, slab, true
	}
	lo := len(slab)
	slab, fp, ok := h.AppendRowPoints(slab, tsuid, ref.Base)
	if !ok || len(slab) == lo {
		return headRow{}, slab, false
	}
	if c != nil {
		c.add(fp, rr.hkey, headCells, slab[lo:]) // still filling: on a second sighting
	}
	return headRow{base: ref.Base, lo: lo, hi: len(slab)}, slab, true
}

// appendHeadRows appends to rows the head's rows of tsuid that may hold
// points in [start, end], read with readHeadRow onto slab, and charges
// their points to b; n is how many.
func (rr *rowReader) appendHeadRows(rows []headRow, slab []series.Point, tsuid []byte, start, end int64, b *Budget) (_ []headRow, _ []series.Point, n int, _ error) {
	h := rr.r.opts.Head
	if h == nil {
		return rows, slab, 0, nil
	}
	rr.hrows = h.AppendRows(rr.hrows[:0], tsuid, start, maxtOf(end))
	for _, ref := range rr.hrows {
		var (
			hr headRow
			ok bool
		)
		if hr, slab, ok = rr.readHeadRow(slab, tsuid, ref); ok {
			rows = append(rows, hr)
			n += len(hr.points(slab))
		}
	}
	return rows, slab, n, b.AddPoints(n)
}

// lastHeadRow reads the newest of the head's rows of tsuid with points in
// [start, end], the rows newest first, and returns it alone (in rr).
func (rr *rowReader) lastHeadRow(tsuid []byte, start, end int64) headRows {
	h := rr.r.opts.Head
	if h == nil {
		return headRows{}
	}
	rr.hrows = h.AppendRows(rr.hrows[:0], tsuid, start, maxtOf(end))
	for k := len(rr.hrows) - 1; k >= 0; k-- {
		hr, slab, ok := rr.readHeadRow(rr.hslab[:0], tsuid, rr.hrows[k])
		rr.hslab = slab[:0]
		if ok && len(clip(hr.points(slab), start, end)) > 0 {
			rr.hone[0] = hr
			return headRows{rows: rr.hone[:], slab: slab}
		}
	}
	return headRows{}
}

// maxtOf is the exclusive bound of an inclusive end.
func maxtOf(end int64) int64 {
	if end == math.MaxInt64 {
		return end
	}
	return end + 1
}

// headSeriesPerWorker is the fewest series a worker reads the head rows
// of: below it, one goroutine reads them all.
const headSeriesPerWorker = 8

// readHeadRows reads every selected series' head rows (appendHeadRows)
// into rows, series i's being rows[offs[i]:offs[i+1]] (offs has one more
// entry than the selection has series, with or without a head; on an
// error it may have fewer), their decoded copies onto slab, and returns
// the points charged to the budget. A large selection is split among
// Parallelism workers by contiguous series: a first read after a bulk
// load decodes every row.
func (r *Reader) readHeadRows(ctx context.Context, sel *Selection, rows []headRow, slab []series.Point, offs []int) (_ []headRow, _ []series.Point, _ []int, charged int, err error) {
	n := len(sel.Series)
	offs = append(offs[:0], 0)
	if r.opts.Head == nil || n == 0 {
		for range n {
			offs = append(offs, 0) // every series: no head rows
		}
		return rows, slab, offs, 0, nil
	}
	workers := max(1, min(r.opts.Parallelism, n/headSeriesPerWorker))
	hr := &headRead{sel: sel, per: (n + workers - 1) / workers, parts: make([]headPart, workers)}
	hr.parts[0] = headPart{rows: rows, slab: slab, offs: offs[1:]}
	err = r.forEach(ctx, workers, workers, hr)
	p0 := &hr.parts[0]
	// p0.offs began in offs' array after the 0, and may have moved.
	rows, slab, offs, charged = p0.rows, p0.slab, append(offs[:1], p0.offs...), p0.n
	for i := 1; i < len(hr.parts); i++ {
		p := &hr.parts[i]
		base, sbase := len(rows), len(slab)
		for _, h := range p.rows {
			if h.entry == nil {
				h.lo, h.hi = h.lo+sbase, h.hi+sbase
			}
			rows = append(rows, h)
		}
		slab = append(slab, p.slab...)
		for _, o := range p.offs {
			offs = append(offs, base+o)
		}
		charged += p.n
	}
	return rows, slab, offs, charged, err
}

// headRead is readHeadRows' task: part p reads series [p*per, (p+1)*per).
type headRead struct {
	sel   *Selection
	per   int
	parts []headPart
}

// headPart is one worker's head rows: offs[k] ends the part's k-th
// series in rows; n counts the points charged.
type headPart struct {
	rows []headRow
	slab []series.Point
	offs []int
	n    int
}

func (hr *headRead) run(_ context.Context, rr *rowReader, p int) error {
	part, sel := &hr.parts[p], hr.sel
	for i := p * hr.per; i < min((p+1)*hr.per, len(sel.Series)); i++ {
		rr.tsuid = append(rr.tsuid[:0], sel.Series[i].TSUID...)
		var (
			n   int
			err error
		)
		part.rows, part.slab, n, err = rr.appendHeadRows(part.rows, part.slab, rr.tsuid, sel.Start, sel.End, sel.Budget)
		part.n += n
		if err != nil {
			return err
		}
		part.offs = append(part.offs, len(part.rows))
	}
	return nil
}
