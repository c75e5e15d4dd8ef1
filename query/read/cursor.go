package read

import (
	"context"
	"math"

	"github.com/tsd-db/tsd/series"
)

// source is where a cursor's stored rows come from.
type source uint8

const (
	// fromGets Gets every hour of [hour, last] (the per-series plan).
	fromGets source = iota
	// fromFetched reads the rows Fetch's scan kept, still encoded.
	fromFetched
	// fromFed takes the rows a bucket scan pushes, one at a time,
	// decoded (the scan plan of Read and Visit).
	fromFed
)

// cursor is the read core: it walks one series' hour rows in time order,
// each stored row (from its source) merged with the head's row of its
// hour by mergeRow, a head row of an hour with no stored row alone, and
// rows with no point in [start, end] skipped. Its current row is pts:
// the row's points in the range, sorted, one per timestamp; entry is the
// row cache's entry when pts end its points (a sum may be taken from
// it), else nil. The head's rows are read before the cursor starts, so
// none of their points falls between the two reads (see the package
// doc). The adapters drive it: a SeriesIterator pulls rows as its walk
// reaches them, a stream (Read, Visit) pushes every row to its sink,
// Last asks for hours from the newest down.
type cursor struct {
	rr         *rowReader // decoder and Get buffers; nil once released
	ctx        context.Context
	budget     *Budget
	tsuid      []byte // fromGets
	start, end int64
	hour, last int64 // next hour (base ms) to consider, last hour
	src        source
	head       headRows
	rows       []fetchedRow // fromFetched: the rows not yet read
	fed        fedRow       // fromFed: the row pushed, not yet merged
	// out is where rows are decoded or merged: the adapter's, since a
	// SeriesIterator's row outlives its rowReader.
	out   []series.Point
	pts   []series.Point // the current row
	entry *cacheEntry
	// walk is a SeriesIterator's walk by Gets, recorded whole when it
	// ends, and the series' record it reads from (trustseries.go).
	walk seriesWalk
}

// fedRow is a decoded stored row pushed into a cursor.
type fedRow struct {
	base    int64 // ms
	pts     []series.Point
	entry   *cacheEntry
	pending bool
}

// noRow is nextBase's answer when no row is left.
const noRow = math.MaxInt64

// cover widens [hour, last], the index span's hours in the range, to the
// head's rows: the span bounds stored rows, and the head may hold rows
// just outside it until its next widening.
func (c *cursor) cover() {
	if n := len(c.head.rows); n > 0 {
		c.hour = min(c.hour, c.head.rows[0].base)
		c.last = max(c.last, c.head.rows[n-1].base)
	}
}

// next moves to the next row with points in the range; false at the
// end, on an error, or (fromFed) once the pushed row is merged.
func (c *cursor) next() (bool, error) {
	for {
		base := c.hour // every hour, with Gets
		if c.src != fromGets {
			base = c.nextBase()
		} else {
			c.head.next(base) // drops the head rows a skip passed
		}
		if base == noRow || base > c.last {
			c.endWalk()
			return false, nil
		}
		if c.src != fromFed {
			if err := c.ctx.Err(); err != nil {
				return false, err
			}
		}
		c.hour = base + hourMs
		if c.mayStore(base) {
			if err := c.load(base); err != nil || len(c.pts) > 0 {
				return err == nil, err
			}
			continue
		}
		// The head's row alone: the source has no row at base, so base is
		// the head's next row.
		c.pts, c.entry = c.head.take(c.start, c.end, c.rr.r.opts.Head, &c.out)
		if len(c.pts) > 0 {
			return true, nil
		}
	}
}

// done reports whether no row is left.
func (c *cursor) done() bool {
	if c.src == fromGets {
		return c.hour > c.last
	}
	base := c.nextBase()
	return base == noRow || base > c.last
}

// skipTo moves the next hour to the one holding t, unless past it.
func (c *cursor) skipTo(t int64) {
	if t >= 0 && t-t%hourMs > c.hour {
		c.hour = t - t%hourMs
	}
}

// nextBase returns the hour of the next row that may have points, for a
// source whose rows are known (with Gets, every hour may): the earlier
// of its next row and the head's.
func (c *cursor) nextBase() int64 {
	h := c.head.next(c.hour)
	switch c.src {
	case fromFetched:
		for len(c.rows) > 0 && c.rows[0].base < c.hour {
			c.rows = c.rows[1:]
		}
		if len(c.rows) > 0 {
			return min(h, c.rows[0].base)
		}
	default:
		if c.fed.pending {
			return min(h, c.fed.base)
		}
	}
	return h
}

// load makes the row of the hour at base current, for a source that may
// have a stored row there. With no head row to merge, the stored row is
// decoded straight into c.out (or is the cache's slice); with one, into
// the rowReader's scratch, and merged into c.out with the head's row (a
// snapshot decoded into the rowReader's other scratch, or into c.out
// when the store has no row: the row outlives the rowReader).
func (c *cursor) load(base int64) error {
	hasHead := c.head.at(base)
	dst := c.out
	if hasHead {
		dst = c.rr.store
	}
	store, sentry, decoded, err := c.stored(dst, base)
	if decoded && !hasHead {
		c.out = store[:0]
	} else if decoded {
		c.rr.store = store[:0]
	}
	if err != nil {
		c.pts, c.entry = nil, nil
		return err
	}
	store = clip(store, c.start, c.end)
	if !hasHead {
		c.pts, c.entry = store, sentry
		return nil
	}
	buf := &c.rr.hdec
	if len(store) == 0 {
		buf = &c.out
	}
	head, hentry := c.head.take(c.start, c.end, c.rr.r.opts.Head, buf)
	c.pts, c.entry = mergeRow(c.out, store, sentry, head, hentry)
	switch {
	case len(head) > 0 && len(store) > 0:
		c.out = c.pts[:0] // merged: keep the grown buffer
	case len(head) == 0 && decoded:
		// The stored row alone, in the rowReader's scratch: moved to
		// c.out, which outlives it.
		c.out = append(c.out[:0], store...)
		c.pts = c.out
	}
	return nil
}

// mayStore reports whether c's source may have a stored row at base:
// every hour may, with Gets; Fetch's and a scan's rows are known.
func (c *cursor) mayStore(base int64) bool {
	switch c.src {
	case fromFetched:
		return len(c.rows) > 0 && c.rows[0].base == base
	case fromFed:
		return c.fed.pending && c.fed.base == base
	}
	return true
}

// stored returns the stored row of the hour at base from c's source (one
// mayStore allows), as rowReader.view does; decoded is true when the
// points went to dst (a row the Get did not find is dst[:0]).
func (c *cursor) stored(dst []series.Point, base int64) (pts []series.Point, entry *cacheEntry, decoded bool, err error) {
	rr := c.rr
	switch c.src {
	case fromGets:
		return c.get(dst, base)
	case fromFetched: // mayStore: c.rows[0] is base's
		fr := &c.rows[0]
		c.rows = c.rows[1:]
		pts, entry, err = fr.view(rr, dst, c.budget)
		return pts, entry, entry == nil, err
	}
	c.fed.pending = false // mayStore: the fed row is base's
	return c.fed.pts, c.fed.entry, false, nil
}

// get Gets the stored row of the hour at base, or takes it from the
// walk's record, and notes it in the walk.
func (c *cursor) get(dst []series.Point, base int64) (pts []series.Point, entry *cacheEntry, decoded bool, err error) {
	rr, w := c.rr, &c.walk
	if w.fromRecord(base) {
		if e, ok := w.rec.storedAt(base); ok {
			w.sawStored(base, e, e != nil, true)
			w.fromRec++
			if e != nil {
				w.rowsFromRec++
			}
			return rr.entryRow(dst, e, c.budget)
		}
	}
	pts, entry, decoded, err = rr.getRow(c.ctx, dst, c.tsuid, base, c.budget)
	if err != nil {
		w.whole = false
		return pts, entry, decoded, err
	}
	w.sawStored(base, entry, rr.found, false)
	return pts, entry, decoded, nil
}

// endWalk records the walk once it has met its last hour.
func (c *cursor) endWalk() {
	if c.src == fromGets && c.rr != nil {
		c.walk.end(c.tsuid, c.last)
	}
}
