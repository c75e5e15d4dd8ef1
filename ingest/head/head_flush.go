package head

import (
	"fmt"
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/series"
)

// This file is the head's side of the flush (package ingest/flush): the
// flusher takes hour entries, detaches the rows they name, writes them and
// then finishes or reinstates each one. Nothing else should call these.

// TakeHours removes from the hour index the entries of every hour base for
// which pick is true and appends them to dst, those appended sorted in
// flush order: by hour, then series, so the oldest rows go first and the
// keys of one hour together. Every entry must then be detached
// (DetachRow) or given back (RestoreEntries).
func (h *Head) TakeHours(dst []HourEntry, pick func(base int64) bool) []HourEntry {
	n := len(dst)
	dst = h.hours.take(dst, pick)
	sortEntries(dst[n:])
	return dst
}

// ListedRows counts the rows entered in the hour index that no flush had
// taken before: rows opened by appends and rows put back (Reinstate). A
// flush that reads it before TakeHours and finds it unchanged at its
// next round knows that no row was listed since: every row in the head
// is one that round took and gave back, or one in an hour it did not
// take.
func (h *Head) ListedRows() uint64 { return h.hours.listed.Load() }

// OldestHour returns the base of the oldest hour with an open row, in
// Unix milliseconds (a multiple of RowSpan, as every row base in the
// head; not the seconds of a row key's base time); ok is false when the
// head has none.
func (h *Head) OldestHour() (base int64, ok bool) { return h.hours.oldest() }

// DetachedRow is a row a flush took out of its series to write (DetachRow).
// Readers still see the row, among its series' flushing rows, until
// FinishRow or Reinstate. row is a copy of that entry; both share the
// chunk, which nobody changes any more.
type DetachedRow struct {
	s   *memSeries
	row openRow
	// late says the store may already hold points of this row: the row was
	// flushed before in this process, rebuilt from the log, or put back
	// after a failed write. Its column is queued for compaction.
	late bool
	fp   uint64 // FP
}

// Key returns the row's series key (metric UID ‖ tag UIDs); it must not
// be changed.
func (d *DetachedRow) Key() []byte { return keyBytes(d.s.key) }

// Base returns the first millisecond of the row's hour.
func (d *DetachedRow) Base() int64 { return d.row.base }

// RowIdent is a row's identity, its series and hour, comparable so that a
// flush can tell whether a batch holds a row twice.
type RowIdent struct {
	s    *memSeries
	base int64
}

// Ident returns the row's identity.
func (d *DetachedRow) Ident() RowIdent { return RowIdent{d.s, d.row.base} }

// LastWrite returns when the row's latest point arrived (Unix ms), 0 for
// a row rebuilt from the log.
func (d *DetachedRow) LastWrite() int64 { return d.row.lastWrite }

// FP returns the fingerprint readers list the row under while no other
// row of its series shares its hour (AppendRows, AppendRowPoints): the
// key of a query reader's cache entry of the row's points, which a flush
// hands on to the stored row (flush.FlushOptions.Moved).
func (d *DetachedRow) FP() uint64 { return d.fp }

// Late reports whether the store may already hold points of the row's
// hour (flushed before by this process, or by an earlier one, rebuilt
// from the log, or put back after a failed write), so its column must be
// queued for compaction.
func (d *DetachedRow) Late() bool { return d.late }

// AppendPoints appends the row's points to dst in time order, one per
// timestamp.
func (d *DetachedRow) AppendPoints(dst []series.Point) []series.Point {
	return d.row.appendPoints(dst, math.MinInt64, math.MaxInt64)
}

// HoldsRowIn reports whether the row's series has a row in the head, not
// being written, whose hour starts in [lo, hi) ms: points a later flush
// writes. Readers read such a range raw, so the rollup writer
// (ingest/flush) leaves a day's cell to the flush of its last row.
func (d *DetachedRow) HoldsRowIn(lo, hi int64) bool {
	s := d.s
	s.mu.Lock()
	defer s.mu.Unlock()
	i, _ := s.findRow(lo)
	return i < len(s.rows) && s.rows[i].base < hi
}

// DetachRow moves the row of e into its series' flushing rows when due
// says it is due (given the series key, the row's base and the arrival of
// its latest point), and returns a copy to write; readers still see the
// row until FinishRow. A row that is not due stays and gets its hour entry
// back; ok is false then, and also when the row is gone (deleted).
func (h *Head) DetachRow(e HourEntry, due func(key string, base, lastWrite int64) bool) (d DetachedRow, ok bool) {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := s.findRow(e.base)
	if !found {
		return d, false
	}
	r := &s.rows[i]
	if !due(s.key, r.base, r.lastWrite) {
		h.hours.add(s, e.base)
		return d, false
	}
	d = DetachedRow{s: s, row: *r, late: r.maybeStored || s.flushed(e.base) || h.beforeOpen(e.base), fp: h.rowFP(r, nil)}
	s.markFlushed(e.base)
	j, _ := findBase(s.flushing, e.base)
	s.flushing = slices.Insert(s.flushing, j, *r)
	s.rows = slices.Delete(s.rows, i, i+1)
	return d, true
}

// RestoreEntries gives the rows of es back their hour entries: a flush
// took the entries but stopped before detaching these rows.
func (h *Head) RestoreEntries(es []HourEntry) {
	for _, e := range es {
		e.s.mu.Lock()
		if _, found := e.s.findRow(e.base); found {
			h.hours.add(e.s, e.base)
		}
		e.s.mu.Unlock()
	}
}

// FinishRow drops a written row from its series' flushing rows and
// releases its memory: the store holds it now.
func (h *Head) FinishRow(d *DetachedRow) {
	d.s.mu.Lock()
	d.s.flushing = dropBase(d.s.flushing, d.row.base)
	d.s.mu.Unlock()
	h.mem.Add(-d.row.bytes())
}

// Reinstate puts back a row that was not written, or whose write failed
// (tried: part of a failed batch may be stored, so the row is marked
// maybeStored). If points arrived for its hour meanwhile, the two merge
// and the newer points win ties.
func (h *Head) Reinstate(d *DetachedRow, tried bool) {
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
		h.hours.list(s, old.base)
		return
	}
	r := &s.rows[i]
	before := r.bytes()
	buf := getPoints()
	merged := mergeRows((*buf)[:0], old, r, math.MinInt64, math.MaxInt64)
	r.mod++
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

// TruncateLog deletes the log segments that hold no point still in the
// head and no commit still on its way into it, and returns the oldest
// segment kept. The flusher calls it after writing rows.
func (h *Head) TruncateLog() (uint32, error) {
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

// RotateLog starts a new log segment, so that a full flush (at shutdown)
// leaves no point in an older one and TruncateLog can delete them all.
func (h *Head) RotateLog() error { return h.log.Rotate() }

// LogDir returns the log's directory, where the flusher keeps its flush
// numbers.
func (h *Head) LogDir() string { return h.log.Dir() }

// FS returns the file system the head's log is on.
func (h *Head) FS() vfs.FS { return h.fs }

// Options returns the options the head was opened with, defaults filled.
func (h *Head) Options() HeadOptions { return h.opts }
