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

// appendHeadKey appends the row cache key of the head row of series tsuid
// at base (ms): the TSUID, then the base big-endian. The reader keys its
// head entries with it and RowMoved finds them by it.
func appendHeadKey(dst, tsuid []byte, base int64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, tsuid...), uint64(base))
}

// headRow is one row of the head read for a query, before the store is:
// its points are the row cache's entry's, a decoded copy at [lo, hi) of
// its reader's headBufs.pts, or (snap) an encoded snapshot at [lo, hi)
// of headBufs.snaps, decoded when the row is taken. Head rows are read
// before the store, and a copy is what survives the row leaving the head
// meanwhile; a snapshot is a few bytes a point, where a decoded copy is
// 24, so a cold read of many rows does not hold them all decoded.
type headRow struct {
	base   int64
	entry  *cacheEntry
	lo, hi int
	n      int // points
	snap   bool
	memo   bool // entry came from the series' record (trustseries.go)
}

// headBufs hold the copies of a read's head rows: decoded points and
// encoded snapshots (Head.AppendRowChunk).
type headBufs struct {
	pts   []series.Point
	snaps []byte
}

// reset empties hb, keeping its memory.
func (hb *headBufs) reset() { hb.pts, hb.snaps = hb.pts[:0], hb.snaps[:0] }

// points returns the row's points; a snapshot is decoded by h onto
// (*buf)[:0], and *buf keeps the grown buffer.
func (hr *headRow) points(hb *headBufs, h Head, buf *[]series.Point) []series.Point {
	switch {
	case hr.entry != nil:
		return hr.entry.pts
	case !hr.snap:
		return hb.pts[hr.lo:hr.hi]
	}
	// A snapshot this read made decodes; were it not to, the row reads
	// as empty rather than as garbage.
	pts, _ := h.DecodeRowChunk((*buf)[:0], hb.snaps[hr.lo:hr.hi])
	*buf = pts[:0]
	return pts
}

// headRows are one series' head rows not yet merged, in time order.
type headRows struct {
	rows []headRow
	bufs headBufs // their copies
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

// at reports whether the first row's base is base.
func (h *headRows) at(base int64) bool { return len(h.rows) > 0 && h.rows[0].base == base }

// take returns the points in [start, end] of the first row, and its row
// cache entry, and drops it; a snapshot is decoded by hd onto buf
// (headRow.points).
func (h *headRows) take(start, end int64, hd Head, buf *[]series.Point) ([]series.Point, *cacheEntry) {
	hr := &h.rows[0]
	h.rows = h.rows[1:]
	return clip(hr.points(&h.bufs, hd, buf), start, end), hr.entry
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
// it holds the row under the fingerprint the head lists it with; when its
// hour is over (recent data, which dashboards read again), decoded into a
// new entry if the cache's reserve has room, else (and with no cache) as
// a snapshot onto hb when snap is set; else decoded onto hb and, while the
// row fills, offered to the cache, which keeps it on its second sighting
// (a filling row read again unchanged). ok is false for a row that left
// the head between listing and reading (the store has it by then) or has
// no points.
func (rr *rowReader) readHeadRow(hb *headBufs, tsuid []byte, ref series.RowRef, snap bool) (_ headRow, ok bool) {
	h, c := rr.r.opts.Head, rr.r.cache
	if c != nil {
		rr.hkey = appendHeadKey(rr.hkey[:0], tsuid, ref.Base)
		if e := c.entry(ref.FP, rr.hkey, headCells); e != nil {
			return headRow{base: ref.Base, entry: e, n: len(e.pts)}, true
		}
	}
	over := ref.Base+hourMs <= rr.r.opts.Now().UnixMilli()
	var room []series.Point
	if over && c != nil {
		room = c.res.alloc(ref.Points)
	}
	if room != nil {
		// Decoded straight into the entry's own slice: no copy.
		pts, fp, ok := h.AppendRowPoints(room, tsuid, ref.Base)
		if !ok || len(pts) == 0 {
			return headRow{}, false
		}
		if e := c.adopt(fp, rr.hkey, headCells, pts); e != nil {
			return headRow{base: ref.Base, entry: e, n: len(pts)}, true
		}
		lo := len(hb.pts)
		hb.pts = append(hb.pts, pts...)
		return headRow{base: ref.Base, lo: lo, hi: len(hb.pts), n: len(pts)}, true
	}
	if over && snap {
		lo := len(hb.snaps)
		var n int
		hb.snaps, _, n, ok = h.AppendRowChunk(hb.snaps, tsuid, ref.Base)
		if !ok || n == 0 {
			hb.snaps = hb.snaps[:lo]
			return headRow{}, false
		}
		return headRow{base: ref.Base, lo: lo, hi: len(hb.snaps), n: n, snap: true}, true
	}
	lo := len(hb.pts)
	var fp uint64
	hb.pts, fp, ok = h.AppendRowPoints(hb.pts, tsuid, ref.Base)
	if !ok || len(hb.pts) == lo {
		hb.pts = hb.pts[:lo]
		return headRow{}, false
	}
	if c != nil && !over {
		c.add(fp, rr.hkey, headCells, hb.pts[lo:], false) // still filling: on a second sighting
	}
	return headRow{base: ref.Base, lo: lo, hi: len(hb.pts), n: len(hb.pts) - lo}, true
}

// appendHeadRows appends to rows the head's rows of tsuid that may hold
// points in [start, end], read with readHeadRow onto hb (snapshots
// allowed), and charges their points to b; n is how many. A row rec
// (the series' record, or nil) holds under the fingerprint the head
// lists it with is taken from there.
func (rr *rowReader) appendHeadRows(rows []headRow, hb *headBufs, tsuid []byte, start, end int64, b *Budget, rec *trustedSeries) (_ []headRow, n int, _ error) {
	h := rr.r.opts.Head
	if h == nil {
		return rows, 0, nil
	}
	rr.hrows = h.AppendRows(rr.hrows[:0], tsuid, start, maxtOf(end))
	var memo int64
	next := 0
	for _, ref := range rr.hrows {
		if e := rec.headAt(&next, ref.Base, ref.FP); e != nil {
			rr.r.cache.touch(e)
			memo++
			rows = append(rows, headRow{base: ref.Base, entry: e, n: len(e.pts), memo: true})
			n += len(e.pts)
			continue
		}
		if hr, ok := rr.readHeadRow(hb, tsuid, ref, true); ok {
			rows = append(rows, hr)
			n += hr.n
		}
	}
	if memo > 0 { // cache hits, found without a lookup
		rr.r.cache.hits.Add(memo)
		rr.r.c.recorded.Add(memo)
	}
	return rows, n, b.AddPoints(n)
}

// lastHeadRow reads the newest of the head's rows of tsuid with points in
// [start, end], the rows newest first, and returns it alone (in rr),
// decoded.
func (rr *rowReader) lastHeadRow(tsuid []byte, start, end int64) headRows {
	h := rr.r.opts.Head
	if h == nil {
		return headRows{}
	}
	rr.hrows = h.AppendRows(rr.hrows[:0], tsuid, start, maxtOf(end))
	for k := len(rr.hrows) - 1; k >= 0; k-- {
		rr.hlast.reset()
		hr, ok := rr.readHeadRow(&rr.hlast, tsuid, rr.hrows[k], false)
		if ok && len(clip(hr.points(&rr.hlast, h, &rr.hdec), start, end)) > 0 {
			rr.hone[0] = hr
			return headRows{rows: rr.hone[:], bufs: rr.hlast}
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
// error it may have fewer), their copies onto hb, and returns the points
// charged to the budget. A large selection is split among Parallelism
// workers by contiguous series: a first read after a bulk load reads
// every row.
func (r *Reader) readHeadRows(ctx context.Context, sel *Selection, rows []headRow, hb *headBufs, offs []int) (_ []headRow, _ []int, charged int, err error) {
	n := len(sel.Series)
	offs = append(offs[:0], 0)
	if r.opts.Head == nil || n == 0 {
		for range n {
			offs = append(offs, 0) // every series: no head rows
		}
		return rows, offs, 0, nil
	}
	workers := max(1, min(r.opts.Parallelism, n/headSeriesPerWorker))
	hr := &headRead{sel: sel, per: (n + workers - 1) / workers, parts: make([]headPart, workers)}
	hr.parts[0] = headPart{rows: rows, bufs: *hb, offs: offs[1:]}
	err = r.forEach(ctx, workers, workers, hr)
	p0 := &hr.parts[0]
	// p0.offs began in offs' array after the 0, and may have moved.
	rows, *hb, offs, charged = p0.rows, p0.bufs, append(offs[:1], p0.offs...), p0.n
	for i := 1; i < len(hr.parts); i++ {
		p := &hr.parts[i]
		base, pbase, sbase := len(rows), len(hb.pts), len(hb.snaps)
		for _, h := range p.rows {
			switch {
			case h.snap:
				h.lo, h.hi = h.lo+sbase, h.hi+sbase
			case h.entry == nil:
				h.lo, h.hi = h.lo+pbase, h.hi+pbase
			}
			rows = append(rows, h)
		}
		hb.pts = append(hb.pts, p.bufs.pts...)
		hb.snaps = append(hb.snaps, p.bufs.snaps...)
		for _, o := range p.offs {
			offs = append(offs, base+o)
		}
		charged += p.n
	}
	return rows, offs, charged, err
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
	bufs headBufs
	offs []int
	n    int
}

func (hr *headRead) run(_ context.Context, rr *rowReader, p int) error {
	part, sel := &hr.parts[p], hr.sel
	var t *trustIndex
	if rr.r.cache != nil {
		t = rr.r.cache.trust
	}
	for i := p * hr.per; i < min((p+1)*hr.per, len(sel.Series)); i++ {
		rr.tsuid = append(rr.tsuid[:0], sel.Series[i].TSUID...)
		var (
			n   int
			err error
		)
		rec, lo := t.findSeries(rr.tsuid), len(part.rows)
		part.rows, n, err = rr.appendHeadRows(part.rows, &part.bufs, rr.tsuid, sel.Start, sel.End, sel.Budget, rec)
		part.n += n
		if err != nil {
			return err
		}
		if t != nil {
			t.noteHeads(rr.tsuid, rec, part.rows[lo:])
		}
		part.offs = append(part.offs, len(part.rows))
	}
	return nil
}
