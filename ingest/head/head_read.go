package head

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/tsd-db/tsd/series"
)

// AppendPoints appends to dst the points of the series with key that are
// still in the head (not yet flushed, or being written) with mint <= T <
// maxt, in time order, one per timestamp (the latest write wins), and
// returns dst. It sees every committed point. It does not allocate beyond
// growing dst.
//
// A reader that also reads the store must read the head first: a row
// leaves the head only after its write to the store, so a point is then
// seen in one or the other (possibly both, with equal values).
func (h *Head) AppendPoints(dst []series.Point, key []byte, mint, maxt int64) []series.Point {
	s := h.series.get(key)
	if s == nil {
		return dst
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendPoints(dst, mint, maxt)
}

// appendPoints merges the flushing rows (older writes) and the open rows.
// The caller holds s.mu.
func (s *memSeries) appendPoints(dst []series.Point, mint, maxt int64) []series.Point {
	s.eachRow(mint, maxt, func(r, older *openRow) {
		dst = appendRowPoints(dst, r, older, mint, maxt)
	})
	return dst
}

// appendRowPoints appends the points of one hour with mint <= T < maxt:
// r's, merged with older's (the flushing row of that hour) if any.
func appendRowPoints(dst []series.Point, r, older *openRow, mint, maxt int64) []series.Point {
	if older != nil {
		return mergeRows(dst, older, r, mint, maxt)
	}
	return r.appendPoints(dst, mint, maxt)
}

// Iterator returns the points AppendPoints would append, as an iterator
// over a snapshot: later commits do not change it.
func (h *Head) Iterator(key []byte, mint, maxt int64) series.Iterator {
	return series.NewSliceIterator(nil, h.AppendPoints(nil, key, mint, maxt))
}

// AppendRows appends to dst a reference to each row of the series with
// key that the head holds and that may have points with mint <= T < maxt,
// in time order: its base and a fingerprint of its points, which changes
// whenever one of them is added or replaced (a row being written and a
// newer row of the same hour count as one). Reading a row's points costs
// a decode; its fingerprint, a hash of two counters per part (rowFP).
func (h *Head) AppendRows(dst []series.RowRef, key []byte, mint, maxt int64) []series.RowRef {
	s := h.series.get(key)
	if s == nil {
		return dst
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eachRow(mint, maxt, func(r, older *openRow) {
		n := r.points()
		if older != nil {
			n += older.points()
		}
		dst = append(dst, series.RowRef{Base: r.base, FP: h.rowFP(r, older), Points: n})
	})
	return dst
}

// AppendRowPoints appends every point of the row of the series with key
// at base, in time order, one per timestamp (the latest write wins), and
// returns the row's fingerprint as AppendRows gives it, taken with the
// points under one lock. ok is false when the head holds no such row (it
// was written to the store since).
func (h *Head) AppendRowPoints(dst []series.Point, key []byte, base int64) (_ []series.Point, fp uint64, ok bool) {
	s := h.series.get(key)
	if s == nil {
		return dst, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eachRow(base, base+1, func(r, older *openRow) {
		dst = appendRowPoints(dst, r, older, base, base+RowSpan)
		fp, ok = h.rowFP(r, older), true
	})
	return dst, fp, ok
}

// rowSnapHeader is a row snapshot's fixed part: the row's base (8 bytes)
// and its point count (4), little endian, before the chunk's bytes.
const rowSnapHeader = 12

// AppendRowChunk appends to dst a snapshot of the row of the series with
// key at base, which DecodeRowChunk turns into the points AppendRowPoints
// would give, and returns the row's fingerprint as AppendRows gives it
// and its point count, taken under one lock; ok is false when the head
// holds no such row. The snapshot is the row's chunk, a few bytes a point
// against a decoded point's 24: a reader that holds many rows until it
// gets to them (a first read after a bulk load) holds them this way. A
// row with out-of-order points or a part being written is merged and
// encoded afresh.
func (h *Head) AppendRowChunk(dst []byte, key []byte, base int64) (_ []byte, fp uint64, n int, ok bool) {
	s := h.series.get(key)
	if s == nil {
		return dst, 0, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eachRow(base, base+1, func(r, older *openRow) {
		dst, n = appendRowSnapshot(dst, r, older)
		fp, ok = h.rowFP(r, older), true
	})
	return dst, fp, n, ok
}

// appendRowSnapshot appends the snapshot of r (merged with older, if
// any) to dst and returns its point count.
func appendRowSnapshot(dst []byte, r, older *openRow) ([]byte, int) {
	c := &r.chunk
	var fresh rowChunk
	if older != nil || len(r.ooo) > 0 {
		buf := getPoints()
		pts := appendRowPoints((*buf)[:0], r, older, r.base, r.base+RowSpan)
		for _, p := range pts {
			fresh.append(r.base, p)
		}
		*buf = pts
		putPoints(buf)
		c = &fresh
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.base))
	dst = binary.LittleEndian.AppendUint32(dst, c.n)
	return append(dst, c.w.b...), int(c.n)
}

// DecodeRowChunk appends the points of a snapshot AppendRowChunk made to
// dst; ok is false when snap is not one (dst is then unchanged).
func (h *Head) DecodeRowChunk(dst []series.Point, snap []byte) (_ []series.Point, ok bool) {
	if len(snap) < rowSnapHeader {
		return dst, false
	}
	base := int64(binary.LittleEndian.Uint64(snap))
	n := binary.LittleEndian.Uint32(snap[8:])
	var it chunkIter
	it.reset(snap[rowSnapHeader:], n, base)
	out, ok := it.appendAll(dst)
	if !ok {
		return dst, false
	}
	return out, true
}

// points bounds the points r holds: its chunk's and its out-of-order
// buffer's, which may repeat a chunk timestamp.
func (r *openRow) points() int { return int(r.chunk.n) + len(r.ooo) }

// eachRow calls fn for each row of s with a base in the hours overlapping
// [mint, maxt), in time order, with the flushing row of the same base as
// older (nil if none); r is then the newer, or the flushing row alone.
// The caller holds s.mu.
func (s *memSeries) eachRow(mint, maxt int64, fn func(r, older *openRow)) {
	// Both lists are in time order: the rows ending before mint are
	// skipped by a search, since a query of the last hours of a day in
	// the head stepped over every earlier row of every series it read.
	rows, fl := s.rows, s.flushing
	rows, fl = rows[rowsFrom(rows, mint):], fl[rowsFrom(fl, mint):]
	for len(rows) > 0 || len(fl) > 0 {
		var r, older *openRow
		switch {
		case len(fl) == 0 || (len(rows) > 0 && rows[0].base < fl[0].base):
			r, rows = &rows[0], rows[1:]
		case len(rows) == 0 || fl[0].base < rows[0].base:
			r, fl = &fl[0], fl[1:]
		default:
			r, older, rows, fl = &rows[0], &fl[0], rows[1:], fl[1:]
		}
		if r.base >= maxt {
			return
		}
		if r.base+RowSpan > mint {
			fn(r, older)
		}
	}
}

// rowsFrom returns the index of the first row of rows (in time order)
// whose hour ends after mint.
func rowsFrom(rows []openRow, mint int64) int {
	lo, hi := 0, len(rows)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rows[m].base+RowSpan > mint {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// rowFP fingerprints the points of r (and older, the flushing row of
// the same hour, if any) by each part's identity and change count: a
// row's id is never reused in this process and every change bumps its
// mod, so equal fingerprints mean equal points (up to a 64-bit hash
// collision), without reading the chunk.
func (h *Head) rowFP(r, older *openRow) uint64 {
	var b [8 * 5]byte
	binary.LittleEndian.PutUint64(b[:], uint64(r.base))
	binary.LittleEndian.PutUint64(b[8:], r.id)
	binary.LittleEndian.PutUint64(b[16:], r.mod)
	if older != nil {
		binary.LittleEndian.PutUint64(b[24:], older.id)
		binary.LittleEndian.PutUint64(b[32:], older.mod)
	}
	return maphash.Bytes(h.fpSeed, b[:])
}
