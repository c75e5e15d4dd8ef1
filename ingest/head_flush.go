package ingest

import (
	"fmt"
	"math"
	"slices"

	"github.com/tsd-db/tsd/series"
)

// detachedRow is a row a flush took out of its series to write. row is a
// copy of the entry in s.flushing; both share the chunk, which nobody
// changes any more.
type detachedRow struct {
	s   *memSeries
	row openRow
	// late says the store may already hold points of this row: the row was
	// flushed before in this process, rebuilt from the log, or put back
	// after a failed write. Its column is queued for compaction.
	late bool
}

// detachRow moves the row of e into its series' flushing rows when due
// says it is due, and returns a copy to write. A row that is not due stays
// and gets its hour entry back; ok is false then.
func (h *Head) detachRow(e hourEntry, due func(*memSeries, *openRow) bool) (d detachedRow, ok bool) {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := s.findRow(e.base)
	if !found {
		return d, false
	}
	r := &s.rows[i]
	if !due(s, r) {
		h.hours.add(s, e.base)
		return d, false
	}
	d = detachedRow{s: s, row: *r, late: r.maybeStored || s.flushed(e.base) || h.beforeOpen(e.base)}
	s.markFlushed(e.base)
	j, _ := findBase(s.flushing, e.base)
	s.flushing = slices.Insert(s.flushing, j, *r)
	s.rows = slices.Delete(s.rows, i, i+1)
	return d, true
}

// restoreEntries gives the rows of es back their hour entries: a flush
// took the entries but stopped before looking at these rows.
func (h *Head) restoreEntries(es []hourEntry) {
	for _, e := range es {
		e.s.mu.Lock()
		if _, found := e.s.findRow(e.base); found {
			h.hours.add(e.s, e.base)
		}
		e.s.mu.Unlock()
	}
}

// finishRow drops a written row from its series' flushing rows and
// releases its memory.
func (h *Head) finishRow(d *detachedRow) {
	d.s.mu.Lock()
	d.s.flushing = dropBase(d.s.flushing, d.row.base)
	d.s.mu.Unlock()
	h.mem.Add(-d.row.bytes())
}

// reinstate puts back a row that was not written, or whose write failed
// (tried: part of a failed batch may be stored, so the row is marked
// maybeStored). If points arrived for its hour meanwhile, the two merge
// and the newer points win ties.
func (h *Head) reinstate(d *detachedRow, tried bool) {
	s, old := d.s, &d.row
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushing = dropBase(s.flushing, old.base)
	i, found := s.findRow(old.base)
	if !found {
		// The flusher releases a row's memory only once it is written, so
		// the old row still counts.
		s.rows = slices.Insert(s.rows, i, *old)
		s.rows[i].maybeStored = old.maybeStored || tried
		h.hours.add(s, old.base)
		return
	}
	r := &s.rows[i]
	before := r.bytes()
	buf := getPoints()
	merged := mergeRows((*buf)[:0], old, r, math.MinInt64, math.MaxInt64)
	r.chunk.reset()
	for _, p := range merged {
		r.chunk.append(r.base, p)
	}
	r.ooo = r.ooo[:0]
	r.minSeg = min(r.minSeg, old.minSeg)
	r.maybeStored = r.maybeStored || old.maybeStored || tried
	*buf = merged
	putPoints(buf)
	h.mem.Add(r.bytes() - before - old.bytes())
}

// mergeRows appends to dst the points of older and newer (rows of one
// base) with mint <= T < maxt, one per timestamp, newer's winning.
func mergeRows(dst []series.Point, older, newer *openRow, mint, maxt int64) []series.Point {
	a, b := getPoints(), getPoints()
	pa := older.appendPoints((*a)[:0], mint, maxt)
	pb := newer.appendPoints((*b)[:0], mint, maxt)
	for i, j := 0, 0; i < len(pa) || j < len(pb); {
		switch {
		case j == len(pb) || (i < len(pa) && pa[i].T < pb[j].T):
			dst = append(dst, pa[i])
			i++
		case i < len(pa) && pa[i].T == pb[j].T:
			dst = append(dst, pb[j])
			i, j = i+1, j+1
		default:
			dst = append(dst, pb[j])
			j++
		}
	}
	*a, *b = pa, pb
	putPoints(a)
	putPoints(b)
	return dst
}

// findBase returns where the row at base is in rows, or would be inserted.
func findBase(rows []openRow, base int64) (int, bool) {
	return slices.BinarySearchFunc(rows, base, func(r openRow, b int64) int { return cmpInt64(r.base, b) })
}

// dropBase removes the row at base from rows.
func dropBase(rows []openRow, base int64) []openRow {
	if i, found := findBase(rows, base); found {
		return slices.Delete(rows, i, i+1)
	}
	return rows
}

// truncateLog deletes the log segments that hold no point still in the
// head and no commit still on its way into it.
func (h *Head) truncateLog() (uint32, error) {
	// Commits hold commitMu shared from reading the segment until their
	// points are in the head: once we hold it, every commit that wrote
	// below floor is in the head, and later ones write at floor or after.
	h.commitMu.Lock()
	floor := h.log.Segment()
	h.commitMu.Unlock()
	if oldest, ok := h.OldestSegment(); ok && oldest < floor {
		floor = oldest
	}
	if err := h.log.TruncateBefore(floor); err != nil {
		return 0, fmt.Errorf("ingest: truncate log: %w", err)
	}
	return floor, nil
}

// beforeOpen reports whether the hour at base ended before the head was
// opened (strictly: a complete flush needs the hour over plus the grace,
// and rows an earlier process flushed early were queued by it), so an
// earlier process may have flushed a row of it, and this
// process's flush history does not know, so the row's new column is queued
// for the compactor. Backfilled history is queued too; the compactor drops
// the entry of a row that turns out to hold one column.
func (h *Head) beforeOpen(base int64) bool { return base+RowSpan < h.openedMs }
