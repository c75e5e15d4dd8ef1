package read

import (
	"context"
	"math"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// rowSink takes a stream's rows (Read and Visit are sinks).
type rowSink interface {
	// row takes series i's next row: pts is valid during the call only
	// and read-only (it may be the row cache's entry, passed along).
	row(i int, pts []series.Point, entry *cacheEntry) error
	// end is series i's last call: notes are its annotations in the
	// range, sorted by time (the sink's), when Selection.Notes is set.
	end(i int, notes []Note) error
}

// stream is the push side of the core, pooled by the Reader: every
// selected series' rows go to a sink, series in parallel. It reads the
// head's rows of the whole selection first; then under the per-series
// plan each series is a cursor on Gets, run to its end by one worker,
// and under the scan plan each bucket's scan pushes every selected row
// into its series' cursor as it arrives (a series lives in one bucket),
// and a last pass gives each series the head rows after its last stored
// row.
type stream struct {
	r      *Reader
	sel    Selection
	sink   rowSink
	scan   bool             // the plan: true scans buckets, false Gets series
	ids    map[string]int32 // TSUID -> index in the selection
	hrows  []headRow        // every series' head rows
	hbufs  headBufs         // their copies
	offs   []int            // series' bounds in hrows
	series []streamSeries
	// The sinks of Read and Visit, kept here to be pooled with it.
	read  readSink
	visit visitSink
}

// streamSeries is one series' head rows not yet given and its notes.
type streamSeries struct {
	head  []headRow // in stream.hrows
	notes []Note
}

// push gives sink every selected series' rows in the range, each
// series' in time order, and ends each series. It charges the series to
// the budget and applies retention.
func (st *stream) push(ctx context.Context, sel *Selection, sink rowSink) error {
	r := st.r
	if ok, err := r.begin(ctx, sel); !ok {
		return err
	}
	st.sel, st.sink = *sel, sink
	// The head before the store: a row leaves the head only once the store
	// has it, so no point falls between the two reads.
	if err := st.readHeads(ctx); err != nil {
		return err
	}
	if st.scan = r.plan(&st.sel) == PlanScan; !st.scan {
		return r.forSeries(ctx, &st.sel, st)
	}
	st.ids = selectionIDs(st.ids, &st.sel)
	if err := r.forBuckets(ctx, st); err != nil {
		return err
	}
	return r.forSeries(ctx, &st.sel, streamEnd{st})
}

// maxPooledStream is the most head row copies (in points, 24 bytes
// each) putStream keeps.
const maxPooledStream = 1 << 16

func (r *Reader) putStream(st *stream) {
	clear(st.series)
	st.series = st.series[:0]
	clear(st.ids)
	clear(st.hrows) // drop cache entries
	st.hrows = st.hrows[:0]
	if cap(st.hbufs.pts)*pointBytes+cap(st.hbufs.snaps) > maxPooledStream*pointBytes {
		st.hbufs = headBufs{}
	}
	st.sel, st.sink = Selection{}, nil
	clear(st.read.pts)
	clear(st.read.notes)
	st.read, st.visit = readSink{pts: st.read.pts[:0], notes: st.read.notes[:0]}, visitSink{}
	r.streams.Put(st)
}

// readHeads reads every selected series' head rows in the range.
func (st *stream) readHeads(ctx context.Context) error {
	sel := &st.sel
	n := len(sel.Series)
	if cap(st.series) < n {
		st.series = make([]streamSeries, n)
	}
	st.series = st.series[:n]
	var err error
	st.hbufs.reset()
	st.hrows, st.offs, _, err = st.r.readHeadRows(ctx, sel, st.hrows[:0], &st.hbufs, st.offs)
	if err != nil {
		return err
	}
	for i := range st.series {
		st.series[i].head = st.hrows[st.offs[i]:st.offs[i+1]:st.offs[i+1]]
	}
	return nil
}

// cursor starts a cursor over series i on rr, from src.
func (st *stream) cursor(c *cursor, ctx context.Context, rr *rowReader, i int, src source) {
	*c = cursor{rr: rr, ctx: ctx, budget: st.sel.Budget, start: st.sel.Start, end: st.sel.End, src: src,
		hour: math.MinInt64, last: math.MaxInt64, head: headRows{rows: st.series[i].head, bufs: st.hbufs}, out: rr.out}
}

// drain gives the sink c's rows while it has some, and keeps what is left
// of series i's head rows.
func (st *stream) drain(c *cursor, i int) error {
	var err error
	for {
		ok, nerr := c.next()
		if !ok {
			err = nerr
			break
		}
		if err = st.sink.row(i, c.pts, c.entry); err != nil {
			break
		}
	}
	st.series[i].head, c.rr.out = c.head.rows, c.out[:0]
	return err
}

// run Gets series i's rows to its end (the per-series plan), or scans
// salt bucket i (the scan plan).
func (st *stream) run(ctx context.Context, rr *rowReader, i int) error {
	if st.scan {
		rr.want = st.sel.Notes
		return st.r.scanBucket(ctx, rr, i, &st.sel, st.ids, st)
	}
	s := &st.sel.Series[i]
	var c cursor
	st.cursor(&c, ctx, rr, i, fromGets)
	c.tsuid = append(rr.tsuid[:0], s.TSUID...)
	rr.tsuid = c.tsuid
	sp := spanOf(s)
	c.hour, c.last = hourRange(&sp, st.sel.Start, st.sel.End)
	c.cover()
	rr.want, rr.notes = st.sel.Notes, rr.notes[:0]
	if err := st.drain(&c, i); err != nil {
		return err
	}
	return st.sink.end(i, clipNotes(rr.notes, st.sel.Start, st.sel.End))
}

// cells takes a scanned row of series id, decodes it and pushes it into
// the series' cursor.
func (st *stream) cells(rr *rowReader, id int32, baseSec int64, cells []rowkey.Cell, first, last bool) error {
	var ok bool
	if rr.cells, ok = rr.gather(cells, first, last); !ok {
		return nil
	}
	rr.notes = rr.notes[:0]
	pts, entry, err := rr.view(rr.store, baseSec, st.sel.Budget)
	if entry == nil {
		rr.store = pts[:0]
	}
	ss := &st.series[id]
	if len(rr.notes) > 0 {
		ss.notes = append(ss.notes, rr.notes...)
	}
	if err != nil {
		return err
	}
	if len(ss.head) == 0 {
		// No head row left to merge: mergeRow would give the stored row
		// as it is, so it goes to the sink without a cursor (the common
		// case, and a row costs little more than this when cached).
		if pts = clip(pts, st.sel.Start, st.sel.End); len(pts) == 0 {
			return nil
		}
		return st.sink.row(int(id), pts, entry)
	}
	var c cursor
	st.cursor(&c, nil, rr, int(id), fromFed)
	c.fed = fedRow{base: baseSec * 1000, pts: pts, entry: entry, pending: true}
	c.last = c.fed.base
	return st.drain(&c, int(id))
}

// streamEnd is the scan plan's last pass: each series' head rows after
// its last stored row, then its end.
type streamEnd struct{ st *stream }

func (e streamEnd) run(ctx context.Context, rr *rowReader, i int) error {
	st := e.st
	if len(st.series[i].head) > 0 {
		var c cursor
		st.cursor(&c, ctx, rr, i, fromFed)
		if err := st.drain(&c, i); err != nil {
			return err
		}
	}
	return st.sink.end(i, clipNotes(st.series[i].notes, st.sel.Start, st.sel.End))
}
