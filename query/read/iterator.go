package read

import (
	"cmp"
	"context"
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
	return r.newIterator(ctx, &s, iterFrom{}, start, end, b, err, nil)
}

// iterFrom is where a new iterator's rows come from.
type iterFrom struct {
	// fetched: Fetch's scan read the series' stored rows (rows) and,
	// before them, its head rows (head); else the iterator Gets each hour
	// and reads the head when it starts.
	fetched bool
	rows    []fetchedRow
	head    headRows
	// notes asks for the series' annotations: Fetch's scan found them
	// (fetchedNotes), else the iterator gathers them from the rows it Gets.
	notes        bool
	fetchedNotes []Note
}

// newIterator starts an iterator over s, reusing reuse's buffers.
func (r *Reader) newIterator(ctx context.Context, s *index.Series, from iterFrom, start, end int64, b *Budget, err error, reuse *SeriesIterator) *SeriesIterator {
	it := reuse
	if it == nil {
		it = r.iters.Get().(*SeriesIterator)
	}
	rr, out, hbuf, hmem := it.cur.rr, it.cur.out[:0], it.hbuf[:0], it.hmem
	wstored, wheads := it.cur.walk.stored, it.cur.walk.heads
	hmem.reset()
	if rr != nil && rr.r != r {
		rr.r.putRowReader(rr)
		rr = nil
	}
	if rr == nil {
		rr = r.getRowReader()
	}
	*it = SeriesIterator{r: r, hbuf: hbuf, hmem: hmem, i: -1, err: err,
		notes: append(it.notes[:0], from.fetchedNotes...)}
	c := &it.cur
	*c = cursor{rr: rr, ctx: ctx, budget: b, start: start, end: end, out: out}
	if err != nil {
		it.finish()
		return it
	}
	rr.want, rr.notes = from.notes && !from.fetched, rr.notes[:0]
	rr.tsuid = append(rr.tsuid[:0], s.TSUID...)
	c.tsuid = rr.tsuid
	sp := spanOf(s)
	c.hour, c.last = hourRange(&sp, start, end)
	if from.fetched {
		c.src, c.rows, c.head = fromFetched, from.rows, from.head
		c.cover()
		return it
	}
	var t *trustIndex
	if r.cache != nil && !rr.want {
		t = r.cache.trust
	}
	rec := t.findSeries(rr.tsuid)
	it.hbuf, _, it.err = rr.appendHeadRows(hbuf, &it.hmem, rr.tsuid, start, end, b, rec)
	c.head = headRows{rows: it.hbuf, bufs: it.hmem}
	c.cover()
	if t != nil && it.err == nil {
		c.walk.start(t, rec, c.hour, c.last, wstored, wheads)
		for i := range it.hbuf {
			c.walk.sawHead(&it.hbuf[i])
		}
	}
	return it
}

// SeriesIterator is one series' lazy read, a series.Iterator, over the
// core's cursor: its points come one hour row at a time, merged with the
// head's. Errors are sticky. It gives its decoder back to the Reader as
// soon as it has read its last row; it keeps the buffer of the current
// row, which a later iterator reusing it takes over, or Close returns.
// Not safe for concurrent use.
type SeriesIterator struct {
	// buf and i are the walk's position, at the front for Next's loop:
	// buf is the cursor's current row, entry its row cache entry.
	buf   []series.Point
	i     int
	entry *cacheEntry
	r     *Reader
	cur   cursor    // cur.rr is nil once the last row is read
	hbuf  []headRow // the head rows' backing array when read here
	hmem  headBufs  // their copies
	notes []Note    // annotations found so far, with iterFrom.notes
	err   error
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
		it.cur.skipTo(t)
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
		it.cur.skipTo(t)
		if !it.load() {
			return nil, false
		}
	}
}

func cmpTime(p series.Point, t int64) int { return cmp.Compare(p.T, t) }

// BatchSum returns the exact integer sum of the first k points of pts,
// the end of the last NextBatch (pts must end where it ended), without
// reading every point: when the row came whole from the row cache, every
// point is an Int and the row's length × maxAbs <= 2^53, so adding the
// points one by one in an int64 or a float64 gives this very sum, with
// every partial sum exact. maxAbs bounds their magnitudes. ok is false
// otherwise; the caller then adds the points itself.
func (it *SeriesIterator) BatchSum(pts []series.Point, k int) (sum int64, maxAbs uint64, ok bool) {
	if it.entry == nil {
		return 0, 0, false
	}
	return it.entry.spanSum(pts, k)
}

// BatchExtremes returns the smallest and largest value of the first k
// points of pts, the end of the last NextBatch (pts must end where it
// ended), without reading every point: when the row came whole from the
// row cache with block extremes, every point is an Int. ok is false
// otherwise; the caller then reads the points itself.
func (it *SeriesIterator) BatchExtremes(pts []series.Point, k int) (lo, hi int64, ok bool) {
	if it.entry == nil {
		return 0, 0, false
	}
	return it.entry.extremes(pts, k)
}

// At implements series.Iterator.
func (it *SeriesIterator) At() series.Point { return it.buf[it.i] }

// Err implements series.Iterator.
func (it *SeriesIterator) Err() error { return it.err }

// Notes returns the series' annotations in the range, sorted by time,
// when the iterator came from a Fetch with Selection.Notes; complete once
// Next has returned false. The slice is the caller's.
func (it *SeriesIterator) Notes() []Note { return clipNotes(it.notes, it.cur.start, it.cur.end) }

// load fills buf with the next row that has points; false at the end.
func (it *SeriesIterator) load() bool {
	c := &it.cur
	for c.rr != nil && it.err == nil {
		ok, err := c.next()
		if rr := c.rr; rr.want && len(rr.notes) > 0 {
			it.notes = append(it.notes, rr.notes...)
			rr.notes = rr.notes[:0]
		}
		if it.err = err; !ok {
			break
		}
		it.buf, it.entry, it.i = c.pts, c.entry, -1
		if c.done() {
			c.endWalk()
			it.release()
		}
		return true
	}
	it.finish()
	return false
}

// release gives the decoder back; buf stays valid (it is in cur.out, a
// head slab or the row cache).
func (it *SeriesIterator) release() {
	if c := &it.cur; c.rr != nil {
		c.walk.count(&c.rr.r.c)
		c.rr.r.putRowReader(c.rr)
		c.rr, c.head, c.rows = nil, headRows{}, nil
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
		it.hmem.reset()
		w := &it.cur.walk
		clear(w.stored[:cap(w.stored)])
		clear(w.heads[:cap(w.heads)])
		*it = SeriesIterator{cur: cursor{out: it.cur.out[:0], walk: seriesWalk{stored: w.stored[:0], heads: w.heads[:0]}},
			hbuf: it.hbuf[:0], hmem: it.hmem, notes: it.notes[:0]}
		r.iters.Put(it)
	}
}
