package read

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// Iterator returns the points of s in [start, end] (ms, inclusive) as a
// lazy iterator: it Gets one hour row at a time, when Next, SeekTime or
// NextBatch reaches it, so an engine that needs a window never holds the
// whole series. The head's rows of the range are read up front (before
// the store), from the row cache when it holds them as it holds stored
// rows. Points count against b as they are decoded.
// Retention applies as in Read. The iterator must not outlive ctx.
func (r *Reader) Iterator(ctx context.Context, s index.Series, start, end int64, b *Budget) *SeriesIterator {
	start, err := r.clampStart(ctx, s.TSUID, start)
	return r.newIterator(ctx, &s, iterRows{}, start, end, b, err, nil)
}

// iterRows are the rows a new iterator reads.
type iterRows struct {
	rows    []fetchedRow // with fetched: every stored row of the series
	fetched bool         // false: Get each hour
	// With headRead, the series' head rows, read before the store was
	// (Fetch's scan), their decoded copies in hslab; else the iterator
	// reads them when it starts.
	head     []headRow
	hslab    []series.Point
	headRead bool
	// notes asks for the series' annotations: Fetch's scan found them
	// (fetchedNotes), else the iterator gathers them from the rows it Gets.
	notes        bool
	fetchedNotes []Note
}

// newIterator starts an iterator over s, reusing reuse's buffers.
func (r *Reader) newIterator(ctx context.Context, s *index.Series, rows iterRows, start, end int64, b *Budget, err error, reuse *SeriesIterator) *SeriesIterator {
	it := reuse
	if it == nil {
		it = r.iters.Get().(*SeriesIterator)
	}
	rr, mem, hbuf, hmem := it.rr, it.mem[:0], it.hbuf[:0], it.hmem[:0]
	if rr != nil && rr.r != r {
		rr.r.putRowReader(rr)
		rr = nil
	}
	if rr == nil {
		rr = r.getRowReader()
	}
	*it = SeriesIterator{r: r, ctx: ctx, rr: rr, budget: b, start: start, end: end, rows: rows.rows,
		fetched: rows.fetched, mem: mem, hbuf: hbuf, hmem: hmem, i: -1, err: err,
		notes: append(it.notes[:0], rows.fetchedNotes...)}
	if err != nil {
		it.finish()
		return it
	}
	rr.want, rr.notes = rows.notes && !rows.fetched, rr.notes[:0]
	rr.tsuid = append(rr.tsuid[:0], s.TSUID...)
	sp := spanOf(s)
	it.hour, it.last = hourRange(&sp, start, end)
	if rows.headRead {
		it.head, it.hslab = rows.head, rows.hslab
	} else {
		it.hbuf, it.hmem, _, it.err = rr.appendHeadRows(hbuf, hmem, rr.tsuid, start, end, b)
		it.head, it.hslab = it.hbuf, it.hmem
	}
	if n := len(it.head); n > 0 {
		// The index span bounds stored rows; the head may hold rows just
		// outside it until its next widening.
		it.hour = min(it.hour, it.head[0].base)
		it.last = max(it.last, it.head[n-1].base)
	}
	return it
}

// floorHour returns the base (ms) of the row holding t >= 0.
func floorHour(t int64) int64 { return t - t%hourMs }

// SeriesIterator is one series' lazy read, a series.Iterator. Its points
// come one hour row at a time, merged with the head's. Errors are sticky.
// It gives its decoder back to the Reader as soon as it has read its last
// row; it keeps the buffer of the current row, which a later iterator
// reusing it takes over, or Close returns. Not safe for concurrent use.
type SeriesIterator struct {
	r          *Reader
	ctx        context.Context
	rr         *rowReader // nil once the last row is read
	budget     *Budget
	start, end int64
	hour, last int64          // next row to read, last row (base ms)
	rows       []fetchedRow   // with fetched: the rows not yet read
	fetched    bool           // rows were scanned by Fetch: no Gets
	head       []headRow      // the head's rows not yet merged
	hslab      []series.Point // their decoded copies (it.hmem or Fetch's)
	hbuf       []headRow      // head's backing array when read here
	hmem       []series.Point // hslab's when read here
	mem        []series.Point // buf's whole backing array
	buf        []series.Point // the current row's points
	entry      *cacheEntry    // the row cache's entry buf is part of, if any
	notes      []Note         // annotations found so far, with iterRows.notes
	i          int
	err        error
}

var _ series.Iterator = (*SeriesIterator)(nil)

// Next implements series.Iterator.
func (it *SeriesIterator) Next() bool {
	for {
		if it.i+1 < len(it.buf) {
			it.i++
			return true
		}
		if !it.load() {
			return false
		}
	}
}

// SeekTime implements series.Iterator.
func (it *SeriesIterator) SeekTime(t int64) bool {
	if it.i >= 0 && it.i < len(it.buf) && it.buf[it.i].T >= t {
		return true
	}
	for {
		for it.i+1 < len(it.buf) {
			it.i++
			if it.buf[it.i].T >= t {
				return true
			}
		}
		it.skipTo(t)
		if !it.load() {
			return false
		}
	}
}

// NextBatch returns the points after the current one with T >= t up to
// the end of their hour row, in time order, and moves to the last of them;
// false at the end or on an error. The slice is valid until the next call
// and must not be modified (it may be the row cache's).
func (it *SeriesIterator) NextBatch(t int64) ([]series.Point, bool) {
	for {
		rest := it.buf[it.i+1:]
		it.i = len(it.buf) - 1
		if n := len(rest); n > 0 && rest[n-1].T >= t {
			if rest[0].T >= t { // windows read in turn: no search
				return rest, true
			}
			k, _ := slices.BinarySearchFunc(rest, t, cmpTime)
			return rest[k:], true
		}
		it.skipTo(t)
		if !it.load() {
			return nil, false
		}
	}
}

func cmpTime(p series.Point, t int64) int { return cmp.Compare(p.T, t) }

// BatchSum returns the exact integer sum of pts, the end of the last
// NextBatch (pts must end where it ended), without reading every point:
// when the row came whole from the row cache, every point is an Int and
// len(pts) × maxAbs <= 2^53, so adding the points one by one in an int64
// or a float64 gives this very sum, with every partial sum exact. maxAbs
// bounds their magnitudes. ok is false otherwise; the caller then adds
// the points itself.
func (it *SeriesIterator) BatchSum(pts []series.Point) (sum int64, maxAbs uint64, ok bool) {
	if it.entry == nil {
		return 0, 0, false
	}
	return it.entry.suffixSum(pts)
}

// skipTo moves the next row to read to the one holding t, unless past it.
func (it *SeriesIterator) skipTo(t int64) {
	if t >= 0 && floorHour(t) > it.hour {
		it.hour = floorHour(t)
	}
}

// At implements series.Iterator.
func (it *SeriesIterator) At() series.Point { return it.buf[it.i] }

// Err implements series.Iterator.
func (it *SeriesIterator) Err() error { return it.err }

// Notes returns the series' annotations in the range, sorted by time,
// when the iterator came from a Fetch with Selection.Notes; complete once
// Next has returned false. The slice is the caller's.
func (it *SeriesIterator) Notes() []Note { return clipNotes(it.notes, it.start, it.end) }

// load fills buf with the next hour that has points; false at the end.
func (it *SeriesIterator) load() bool {
	for it.rr != nil && it.err == nil {
		if it.fetched {
			it.skipEmpty()
		}
		if it.hour > it.last {
			break
		}
		h := it.hour
		it.hour += hourMs
		if it.err = it.ctx.Err(); it.err != nil {
			break
		}
		it.loadHour(h)
		if it.rr.want && len(it.rr.notes) > 0 {
			it.notes = append(it.notes, it.rr.notes...)
			it.rr.notes = it.rr.notes[:0]
		}
		if it.err == nil && it.drained() {
			it.release()
		}
		if len(it.buf) > 0 {
			return true
		}
	}
	it.finish()
	return false
}

// drained reports whether no row is left to read.
func (it *SeriesIterator) drained() bool {
	if !it.fetched {
		return it.hour > it.last
	}
	return len(it.head) == 0 && (len(it.rows) == 0 || it.rows[len(it.rows)-1].base < it.hour || it.rows[0].base > it.last)
}

// skipEmpty moves hour to the first hour at or after it with a fetched row
// or a head point: with fetched rows, an hour without either is empty.
func (it *SeriesIterator) skipEmpty() {
	for len(it.rows) > 0 && it.rows[0].base < it.hour {
		it.rows = it.rows[1:]
	}
	next := int64(math.MaxInt64)
	if len(it.rows) > 0 {
		next = it.rows[0].base
	}
	if len(it.head) > 0 {
		next = min(next, max(it.hour, it.head[0].base))
	}
	if next == math.MaxInt64 {
		it.hour = it.last + 1 // nothing left; never overflows
		return
	}
	it.hour = max(it.hour, next)
}

// loadHour reads the stored row at base h and merges the head's row of
// that hour (read up front). With only one of the two, buf is the row
// cache's slice on a hit (it is only read), the head slab, or it.mem
// decoded or copied into, never rr's buffers: rr may go back to the pool
// while buf is in use.
func (it *SeriesIterator) loadHour(h int64) {
	rr := it.rr
	it.i = -1
	it.entry = nil
	head, hentry := it.headRow(h)
	head = clip(head, it.start, it.end) // before dst is chosen: buf may be store
	dst := rr.store
	if len(head) == 0 {
		dst = it.mem // decode straight into buf: nothing to merge
	}
	store, hit, err := it.viewRow(dst, h)
	if !hit && len(head) == 0 {
		it.mem = store[:0]
	} else if !hit {
		rr.store = store[:0]
	}
	if it.err = err; err != nil {
		it.buf = nil
		return
	}
	store = clip(store, it.start, it.end)
	switch {
	case len(head) == 0:
		it.buf = store
		if hit {
			it.entry = rr.entry
		}
	case len(store) == 0:
		it.buf, it.entry = head, hentry
	default:
		it.buf = mergeHead(it.mem[:0], store, head)
		it.mem = it.buf[:0]
	}
}

// headRow returns every point of the head's row at base h (the caller
// clips them) and its row cache entry when they are the cache's, after
// dropping the rows of hours skipped.
func (it *SeriesIterator) headRow(h int64) ([]series.Point, *cacheEntry) {
	for len(it.head) > 0 && it.head[0].base < h {
		it.head = it.head[1:]
	}
	if len(it.head) == 0 || it.head[0].base != h {
		return nil, nil
	}
	hr := &it.head[0]
	it.head = it.head[1:]
	return hr.points(it.hslab), hr.entry
}

// viewRow returns the points of the row at base h, fetched or read with a
// Get, as rowReader.view does; an absent row is dst[:0].
func (it *SeriesIterator) viewRow(dst []series.Point, h int64) ([]series.Point, bool, error) {
	rr := it.rr
	rr.entry = nil
	if !it.fetched {
		if found, err := rr.getCells(it.ctx, rr.tsuid, h); !found {
			return dst[:0], false, err
		}
		return rr.view(dst, h/1000, it.budget)
	}
	if len(it.rows) == 0 || it.rows[0].base != h {
		return dst[:0], false, nil
	}
	fr := &it.rows[0]
	it.rows = it.rows[1:]
	if fr.entry != nil { // found in the row cache by the scan
		rr.r.c.rows.Add(1)
		rr.entry = fr.entry
		return fr.entry.pts, true, it.budget.AddPoints(len(fr.entry.pts))
	}
	fr.load(rr)
	if fr.looked {
		rr.r.c.rows.Add(1)
		rr.entry = nil
		pts, err := rr.decodeMiss(dst[:0], h/1000, fr.fp, it.budget)
		return pts, false, err
	}
	return rr.view(dst, h/1000, it.budget)
}

// release gives the decoder back; buf stays valid (it is mem).
func (it *SeriesIterator) release() {
	if it.rr != nil {
		it.rr.r.putRowReader(it.rr)
		it.rr, it.head, it.rows = nil, nil, nil
	}
}

// finish ends the iteration: Next and SeekTime return false from now on.
func (it *SeriesIterator) finish() {
	it.release()
	it.buf, it.i = nil, -1
}

// Close ends the iteration and gives the iterator and its buffers back to
// the Reader: neither it nor any slice it returned may be used afterwards.
func (it *SeriesIterator) Close() {
	it.finish()
	if it.r != nil {
		r := it.r
		clear(it.hbuf) // drop cache entries
		clear(it.notes)
		*it = SeriesIterator{mem: it.mem[:0], hbuf: it.hbuf[:0], hmem: it.hmem[:0], notes: it.notes[:0]}
		r.iters.Put(it)
	}
}
