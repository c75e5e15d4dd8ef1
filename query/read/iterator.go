package read

import (
	"context"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/uid/index"
)

// Iterator returns the points of s in [start, end] (ms, inclusive) as a
// lazy iterator: it reads one hour row at a time, when Next or SeekTime
// reaches it, so an engine that needs a window never holds the whole
// series. The head's points of the range are read up front (they are in
// memory already). Points count against b as they are decoded. Retention
// applies as in Read. The iterator must not outlive ctx.
func (r *Reader) Iterator(ctx context.Context, s index.Series, start, end int64, b *Budget) series.Iterator {
	it := &lazyIter{ctx: ctx, rr: r.getRowReader(), tsuid: []byte(s.TSUID), budget: b, start: start, end: end}
	var err error
	if it.start, err = r.clampStart(ctx, s.TSUID, start); err != nil {
		it.err = err
		return it
	}
	it.rr.want = false
	sp := spanOf(&s)
	it.hour, it.last = hourRange(&sp, it.start, end)
	it.head = clip(r.headPoints(nil, it.tsuid, it.start, end), it.start, end)
	if n := len(it.head); n > 0 {
		// The index span bounds stored rows; the head may hold points
		// just outside it until its next widening.
		it.hour = min(it.hour, it.head[0].T-it.head[0].T%hourMs)
		it.last = max(it.last, it.head[n-1].T-it.head[n-1].T%hourMs)
	}
	it.err = b.AddPoints(len(it.head))
	return it
}

// lazyIter walks hour rows, merging each with the head's points of that
// hour.
type lazyIter struct {
	ctx        context.Context
	rr         *rowReader
	tsuid      []byte
	budget     *Budget
	start, end int64
	hour, last int64 // next row to read, last row (base ms)
	head       []series.Point
	buf        []series.Point
	i          int
	err        error
	done       bool
}

// Next implements series.Iterator.
func (it *lazyIter) Next() bool {
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
func (it *lazyIter) SeekTime(t int64) bool {
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
		if h := t - t%hourMs; t >= 0 && h > it.hour {
			it.hour = h
		}
		if !it.load() {
			return false
		}
	}
}

// At implements series.Iterator.
func (it *lazyIter) At() series.Point { return it.buf[it.i] }

// Err implements series.Iterator.
func (it *lazyIter) Err() error { return it.err }

// load fills buf with the next hour that has points; false at the end.
func (it *lazyIter) load() bool {
	for !it.done && it.err == nil {
		if it.hour > it.last {
			it.finish()
			return false
		}
		h := it.hour
		it.hour += hourMs
		if it.err = it.ctx.Err(); it.err != nil {
			break
		}
		it.loadHour(h)
		if len(it.buf) > 0 {
			return true
		}
	}
	it.finish()
	return false
}

// loadHour reads the row at base h and merges the head's points of it.
func (it *lazyIter) loadHour(h int64) {
	rr := it.rr
	rr.store, it.err = rr.getRow(it.ctx, rr.store[:0], it.tsuid, h)
	if it.err != nil {
		return
	}
	if it.err = it.budget.AddPoints(len(rr.store)); it.err != nil {
		return
	}
	store := clip(rr.store, it.start, it.end)
	n := 0
	for n < len(it.head) && it.head[n].T < h+hourMs {
		n++
	}
	it.buf = mergeHead(it.buf[:0], store, it.head[:n])
	it.head = it.head[n:]
	it.i = -1
}

// finish returns the buffers once; the iterator is empty afterwards.
func (it *lazyIter) finish() {
	if !it.done {
		it.done = true
		it.buf, it.i = nil, -1
		it.rr.r.putRowReader(it.rr)
	}
}
