package read

import (
	"bytes"
	"context"
	"errors"
	"math"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// hourMs is a row's span.
const hourMs = 3600 * 1000

// rowReader holds one goroutine's buffers.
type rowReader struct {
	r     *Reader
	key   []byte
	cells []rowkey.Cell
	dec   rowkey.RowDecoder
	arena []byte     // a Visit scan's current row cells
	offs  []cellOffs // their bounds in arena
	store []series.Point
	head  []series.Point
	hrows []series.RowRef // a SeriesIterator's head rows
	hkey  []byte          // a head row's row cache key
	tsuid []byte          // a SeriesIterator's series
	ropts storage.ReadOptions
	notes []Note      // with wantNotes: annotations of the rows decoded
	want  bool        // collect annotation cells
	fpBuf []byte      // the row cache's fingerprint scratch
	entry *cacheEntry // the row cache's entry of the last row looked up, nil on a miss
	// getCells' GetAppend buffers, reused from row to row: rr.cells
	// point into gotBuf until the next getCells.
	got    []storage.Cell
	gotBuf []byte
}

func (r *Reader) getRowReader() *rowReader {
	rr := r.pool.Get().(*rowReader)
	rr.ropts.Families = r.families
	return rr
}

func (r *Reader) putRowReader(rr *rowReader) { r.pool.Put(rr) }

// hourRange returns the first and last row base times (ms) of s within
// [start, end].
func hourRange(s *seriesSpan, start, end int64) (first, last int64) {
	first, last = rowkey.BaseTime(start)*1000, rowkey.BaseTime(end)*1000
	if s.has {
		first, last = max(first, s.first*1000), min(last, s.last*1000)
	}
	return first, last
}

// seriesSpan is the part of index.Series the hour loop needs.
type seriesSpan struct {
	first, last int64 // seconds
	has         bool
}

// getRow appends the decoded points of tsuid's row for the hour at base
// (ms) to dst and charges them to b. An absent row appends nothing.
func (rr *rowReader) getRow(ctx context.Context, dst []series.Point, tsuid []byte, base int64, b *Budget) ([]series.Point, error) {
	if found, err := rr.getCells(ctx, tsuid, base); !found {
		return dst, err
	}
	return rr.decode(dst, base/1000, b)
}

// getCells Gets tsuid's row for the hour at base (ms) into rr.key and
// rr.cells; found is false when the row is absent or on an error. The
// row is read with GetAppend into buffers the rowReader keeps, so a read
// of many rows allocates nothing per row; rr.cells alias them and are
// valid until the next getCells, which the row's decode, cache lookup and
// notes (cloned) all precede.
func (rr *rowReader) getCells(ctx context.Context, tsuid []byte, base int64) (found bool, err error) {
	rr.key, err = rr.r.opts.Layout.AppendRowKeyFromTSUID(rr.key[:0], tsuid, base)
	if err != nil {
		return false, err
	}
	rr.r.c.gets.Add(1)
	rr.got, rr.gotBuf, err = rr.r.opts.Data.GetAppend(ctx, rr.got[:0], rr.gotBuf[:0], rr.key, &rr.ropts)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	rr.cells = rr.cells[:0]
	for i := range rr.got {
		c := &rr.got[i]
		rr.cells = append(rr.cells, rowkey.Cell{Qualifier: c.Qualifier, Value: c.Value, Timestamp: c.Timestamp})
	}
	return true, nil
}

// decode appends the points of rr.cells, the row with base time baseSec,
// to dst and charges them to b: every plan's decoded points pass here.
func (rr *rowReader) decode(dst []series.Point, baseSec int64, b *Budget) ([]series.Point, error) {
	fp, pts, hit := rr.cached(baseSec)
	if hit {
		return append(dst, pts...), b.AddPoints(len(pts))
	}
	return rr.decodeMiss(dst, baseSec, fp, b)
}

// view returns the points of rr.cells like decode, for a caller that
// only reads them: on a row cache hit the cache's own slice (hit true, no
// copy), else the row decoded into dst[:0].
func (rr *rowReader) view(dst []series.Point, baseSec int64, b *Budget) (pts []series.Point, hit bool, err error) {
	fp, pts, hit := rr.cached(baseSec)
	if hit {
		return pts, true, b.AddPoints(len(pts))
	}
	pts, err = rr.decodeMiss(dst[:0], baseSec, fp, b)
	return pts, false, err
}

// cached counts the row, collects its notes and looks it up in the row
// cache: its fingerprint, and its points (read-only) when found.
func (rr *rowReader) cached(baseSec int64) (fp uint64, pts []series.Point, hit bool) {
	rr.r.c.rows.Add(1)
	if rr.want {
		rr.collectNotes(baseSec)
	}
	c := rr.r.cache
	rr.entry = nil
	if c == nil {
		return 0, nil, false
	}
	fp, rr.fpBuf = c.fingerprint(rr.fpBuf, rr.key, rr.cells)
	if rr.entry = c.entry(fp, rr.key, len(rr.cells)); rr.entry == nil {
		return fp, nil, false
	}
	return fp, rr.entry.pts, true
}

// decodeMiss decodes rr.cells into dst, charges b and offers the row to
// the cache under fp.
func (rr *rowReader) decodeMiss(dst []series.Point, baseSec int64, fp uint64, b *Budget) ([]series.Point, error) {
	n := len(dst)
	dst, err := rr.dec.Decode(dst, baseSec, rr.cells)
	if err != nil {
		rr.r.corrupt(rr.key, err)
	} else if rr.r.cache != nil {
		rr.r.cache.add(fp, rr.key, len(rr.cells), dst[n:])
	}
	return dst, b.AddPoints(len(dst) - n)
}

// collectNotes appends the row's annotation cells to rr.notes.
func (rr *rowReader) collectNotes(baseSec int64) {
	for i := range rr.cells {
		c := &rr.cells[i]
		if rowkey.Classify(c.Qualifier) != rowkey.ColumnAnnotation {
			continue
		}
		off, err := rowkey.ParseAnnotationQualifier(c.Qualifier)
		if err != nil {
			continue
		}
		rr.notes = append(rr.notes, Note{T: baseSec*1000 + off, Value: bytes.Clone(c.Value)})
	}
}

// clipNotes keeps the notes in [start, end] as a new slice (nil if none).
func clipNotes(notes []Note, start, end int64) []Note {
	var out []Note
	for _, n := range notes {
		if n.T >= start && n.T <= end {
			out = append(out, n)
		}
	}
	return out
}

// corrupt logs and counts cells that did not decode.
func (r *Reader) corrupt(row []byte, err error) {
	var n int64 = 1
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		n = int64(len(j.Unwrap()))
	}
	r.c.corrupt.Add(n)
	r.opts.Logger.Warn("skipped corrupt cells", "row", row, "cells", n, "err", err)
}

// clip keeps the points of pts in [start, end]; pts is sorted. A row the
// range cuts is searched, not walked: a query starting late in an hour
// would otherwise step over most of its first row in every series.
func clip(pts []series.Point, start, end int64) []series.Point {
	if len(pts) == 0 || (pts[0].T >= start && pts[len(pts)-1].T <= end) {
		return pts
	}
	if start > math.MinInt64 {
		pts = pts[firstAfter(pts, start-1):]
	}
	return pts[:firstAfter(pts, end)]
}

// firstAfter returns the index of the first point of pts (sorted) whose
// time is after t, or len(pts).
func firstAfter(pts []series.Point, t int64) int {
	lo, hi := 0, len(pts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pts[m].T > t {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// clipTail clips the points appended to pts after from to [start, end].
func clipTail(pts []series.Point, from int, start, end int64) []series.Point {
	kept := clip(pts[from:], start, end)
	if len(kept) > 0 && &kept[0] != &pts[from] {
		copy(pts[from:], kept)
	}
	return pts[:from+len(kept)]
}

// mergeHead appends to dst the union of store and head (both sorted),
// head winning equal timestamps.
func mergeHead(dst, store, head []series.Point) []series.Point {
	if len(head) == 0 {
		return append(dst, store...)
	}
	if len(store) == 0 {
		return append(dst, head...)
	}
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
