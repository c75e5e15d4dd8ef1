package read

import (
	"bytes"
	"context"
	"errors"
	"math"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
)

// hourMs is a row's span.
const hourMs = 3600 * 1000

// rowReader holds one goroutine's buffers, pooled by the Reader.
type rowReader struct {
	r *Reader
	// key and cells are the stored row being read: cells alias got, a
	// scanner's row or cellBuf, and are valid until the next row.
	key     []byte
	cells   []rowkey.Cell
	cellBuf []rowkey.Cell // cells rebuilt from an arena
	got     []storage.Cell
	gotBuf  []byte // got's bytes (GetAppend)
	dec     rowkey.RowDecoder
	arena   []byte     // a scanned row's batches, gathered
	offs    []cellOffs // their bounds in arena
	store   []series.Point
	out     []series.Point   // rows merged for a Visit, Read or Last
	hlast   headBufs         // Last's head row
	hone    [1]headRow       // Last's head row
	hdec    []series.Point   // a head row's snapshot, decoded to merge
	edgeIt  rowkey.DenseIter // PointsAt's column iterator
	hrows   []series.RowRef
	hkey    []byte // a head row's row cache key
	tsuid   []byte
	ropts   storage.ReadOptions
	notes   []Note // with want: annotations of the rows viewed
	want    bool
	fpBuf   []byte // the row cache's fingerprint scratch
	// lastKey is the row key rowKey last built, for the series lastTSUID.
	lastKey, lastTSUID []byte
	// found is whether the row getRow last read exists.
	found bool
	cw    cellWorker // VisitCells' rollup buffers (rollup.go)
}

func (r *Reader) getRowReader() *rowReader {
	rr := r.pool.Get().(*rowReader)
	rr.ropts.Families = r.families
	return rr
}

func (r *Reader) putRowReader(rr *rowReader) {
	rr.hone[0] = headRow{} // drop a cache entry
	rr.cw.cs = nil         // drop a VisitCells' state
	r.pool.Put(rr)
}

// seriesSpan is the part of index.Series the hour loop needs.
type seriesSpan struct {
	first, last int64 // seconds
	has         bool
}

// spanOf returns the hours the index says s may have rows in.
func spanOf(s *index.Series) seriesSpan {
	return seriesSpan{first: s.First, last: s.Last, has: s.HasSpan}
}

// hourRange returns the first and last row base times (ms) of s within
// [start, end].
func hourRange(s *seriesSpan, start, end int64) (first, last int64) {
	first, last = rowkey.BaseTime(start)*1000, rowkey.BaseTime(end)*1000
	if s.has {
		first, last = max(first, s.first*1000), min(last, s.last*1000)
	}
	return first, last
}

// getCells Gets tsuid's row for the hour at base (ms) into rr.key and
// rr.cells; found is false when the row is absent or on an error. The
// row is read with GetAppend into buffers the rowReader keeps, so a read
// of many rows allocates nothing per row.
func (rr *rowReader) getCells(ctx context.Context, tsuid []byte, base int64) (found bool, err error) {
	if err := rr.rowKey(tsuid, base); err != nil {
		return false, err
	}
	return rr.getKeyCells(ctx)
}

// rowKey sets rr.key to tsuid's row key for the hour holding base (ms).
// A cursor Gets a series hour by hour, and its keys differ only in their
// base time (the salt hashes the metric and tags), so the key last built
// is reused with its time set: checking the TSUID and hashing the salt
// again cost about 0.1 µs a row, a few percent of a query over the head.
func (rr *rowReader) rowKey(tsuid []byte, base int64) error {
	l := &rr.r.opts.Layout
	if len(rr.lastKey) > 0 && bytes.Equal(rr.lastTSUID, tsuid) {
		if err := l.SetKeyTime(rr.lastKey, base); err != nil {
			return err
		}
	} else {
		k, err := l.AppendRowKeyFromTSUID(rr.lastKey[:0], tsuid, base)
		if err != nil {
			rr.lastKey = k[:0]
			return err
		}
		rr.lastKey, rr.lastTSUID = k, append(rr.lastTSUID[:0], tsuid...)
	}
	rr.key = append(rr.key[:0], rr.lastKey...)
	return nil
}

// getKeyCells is getCells for the row whose key is already in rr.key.
func (rr *rowReader) getKeyCells(ctx context.Context) (found bool, err error) {
	rr.r.c.gets.Add(1)
	rr.got, rr.gotBuf, err = rr.r.opts.Data.GetAppend(ctx, rr.got[:0], rr.gotBuf[:0], rr.key, &rr.ropts)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	rr.cells = rr.got
	return true, nil
}

// getRow Gets tsuid's stored row at base (ms) and returns its points as
// view does (decoded when they went to dst; an absent row is dst[:0]),
// answering from the row cache without the Get when the trust index
// knows the row unwritten since it was read (trust.go). A read that
// gathers annotations always Gets: they are in the cells.
func (rr *rowReader) getRow(ctx context.Context, dst []series.Point, tsuid []byte, base int64, b *Budget) (pts []series.Point, entry *cacheEntry, decoded bool, err error) {
	rr.found = false
	if err = rr.rowKey(tsuid, base); err != nil {
		return dst[:0], nil, true, err
	}
	var t *trustIndex
	var gen uint64
	if c := rr.r.cache; c != nil && c.trust != nil && !rr.want {
		t = c.trust
		if e, absent := t.find(rr.key, base); absent || e != nil {
			return rr.trustedRow(dst, e, b)
		}
		gen = t.gen() // before the Get: a write after it is marked later
	}
	if found, err := rr.getKeyCells(ctx); !found {
		if t != nil && err == nil {
			t.record(rr.key, nil, gen)
		}
		return dst[:0], nil, true, err
	}
	rr.found = true
	pts, entry, err = rr.view(dst, base/1000, b)
	if t != nil && entry != nil && err == nil {
		t.record(rr.key, entry, gen)
	}
	return pts, entry, entry == nil, err
}

// trustedRow answers for a stored row from the trust index's entry (nil:
// no row), as getRow does, and counts it.
func (rr *rowReader) trustedRow(dst []series.Point, e *cacheEntry, b *Budget) ([]series.Point, *cacheEntry, bool, error) {
	rr.r.c.trusted.Add(1)
	if e != nil {
		rr.r.c.rows.Add(1)
	}
	return rr.entryRow(dst, e, b)
}

// entryRow answers for a stored row known without a Get from its entry
// (nil: no row), as getRow does; the caller counts it.
func (rr *rowReader) entryRow(dst []series.Point, e *cacheEntry, b *Budget) ([]series.Point, *cacheEntry, bool, error) {
	if rr.found = e != nil; !rr.found {
		return dst[:0], nil, true, nil
	}
	rr.r.cache.touch(e)
	return e.pts, e, false, b.AddPoints(len(e.pts))
}

// view returns the points of the stored row in rr.key and rr.cells, with
// base time baseSec, and charges them to b: on a row cache hit the
// cache's own slice and its entry (read-only: no copy), else the row
// decoded into dst[:0] and a nil entry. Every stored row read passes
// here, or through fetchedRow.view for a row Fetch's scan looked up.
func (rr *rowReader) view(dst []series.Point, baseSec int64, b *Budget) ([]series.Point, *cacheEntry, error) {
	rr.r.c.rows.Add(1)
	if rr.want {
		rr.notes = appendNotes(rr.notes, rr.cells, baseSec*1000)
	}
	var fp uint64
	if c := rr.r.cache; c != nil {
		var e *cacheEntry
		if fp, e, rr.fpBuf = c.lookup(rr.fpBuf, rr.key, rr.cells); e != nil {
			return e.pts, e, b.AddPoints(len(e.pts))
		}
	}
	pts, e, err := rr.decodeMiss(dst[:0], baseSec, fp, b)
	if e != nil {
		return e.pts, e, err // kept on this read: the trust index may record it
	}
	return pts, nil, err
}

// decodeMiss decodes rr.cells into dst, charges b and offers the row to
// the cache under fp; e is the entry the cache made of it, if any.
func (rr *rowReader) decodeMiss(dst []series.Point, baseSec int64, fp uint64, b *Budget) (_ []series.Point, e *cacheEntry, _ error) {
	n := len(dst)
	dst, err := rr.dec.Decode(dst, baseSec, rr.cells)
	if err != nil {
		rr.r.corrupt(rr.key, err)
	} else if rr.r.cache != nil {
		e = rr.r.cache.add(fp, rr.key, len(rr.cells), dst[n:], true)
	}
	return dst, e, b.AddPoints(len(dst) - n)
}

// appendNotes appends the annotation cells of a row with base time
// baseMs, cloned, to dst.
func appendNotes(dst []Note, cells []rowkey.Cell, baseMs int64) []Note {
	for i := range cells {
		c := &cells[i]
		if rowkey.Classify(c.Qualifier) != rowkey.ColumnAnnotation {
			continue
		}
		off, err := rowkey.ParseAnnotationQualifier(c.Qualifier)
		if err != nil {
			continue
		}
		dst = append(dst, Note{T: baseMs + off, Value: bytes.Clone(c.Value)})
	}
	return dst
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
		return pts // a row inside the range: no search
	}
	return clipCut(pts, start, end)
}

// clipCut is clip for a row the range cuts.
func clipCut(pts []series.Point, start, end int64) []series.Point {
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

// cellOffs are one cell's bounds in an arena.
type cellOffs struct {
	q, v, end int
	ts        int64
}

// appendCell copies c's qualifier and value to data and their bounds to
// offs.
func appendCell(data []byte, offs []cellOffs, c *rowkey.Cell) ([]byte, []cellOffs) {
	q := len(data)
	data = append(data, c.Qualifier...)
	v := len(data)
	data = append(data, c.Value...)
	return data, append(offs, cellOffs{q: q, v: v, end: len(data), ts: c.Timestamp})
}

// appendArenaCells appends the cells whose bounds in data are offs, as
// cells aliasing data.
func appendArenaCells(dst []rowkey.Cell, data []byte, offs []cellOffs) []rowkey.Cell {
	for _, o := range offs {
		dst = append(dst, rowkey.Cell{Qualifier: data[o.q:o.v], Value: data[o.v:o.end], Timestamp: o.ts})
	}
	return dst
}
