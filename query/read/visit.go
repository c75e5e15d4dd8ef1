package read

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// Visitor receives the points of a Visit as they are decoded, a row at a
// time, so that a consumer folding them (a downsampler) never holds a
// series whole.
type Visitor interface {
	// Points receives the next points of series i (its index in
	// Selection.Series): sorted by time, after every point given before
	// for i, in the range, the head's merged in (the head wins a
	// timestamp found in both). pts is never empty and is valid only
	// during the call. Calls for one series come from one goroutine at a
	// time; calls for different series may run at once.
	Points(i int, pts []series.Point) error
	// Notes receives series i's annotations in the range, sorted by time,
	// once, when Selection.Notes is set and it has some. The Visitor owns
	// the slice. Concurrency as for Points.
	Notes(i int, notes []Note)
}

// visitState is one Visit's per-series memory, pooled by the Reader.
type visitState struct {
	ids   map[string]int32 // TSUID -> index in the selection
	head  []series.Point   // every series' head points, one slab
	spans []visitSeries
	offs  []int  // series' bounds in head
	key   []byte // a TSUID for the head
}

// visitSeries is one series' head points still to merge and its notes.
type visitSeries struct {
	head  []series.Point // head points not yet given, in visitState.head
	notes []Note
}

// Visit gives v the points of every selected series in the range (and
// with Selection.Notes their annotations), plan as Read's, the scan's salt
// buckets and the per-series plan's series read in parallel. Each
// series' points arrive in time order. The first error (v's, the store's,
// a *LimitError or the context's) stops the visit and is returned.
func (r *Reader) Visit(ctx context.Context, sel Selection, v Visitor) error {
	if len(sel.Series) == 0 {
		return nil
	}
	if err := sel.Budget.AddSeries(len(sel.Series)); err != nil {
		return err
	}
	start, err := r.clampStart(ctx, sel.Series[0].TSUID, sel.Start)
	if err != nil {
		return err
	}
	if start > sel.End {
		return nil
	}
	sel.Start = start
	vs := r.visits.Get().(*visitState)
	defer r.putVisitState(vs)
	// The head before the store: a row leaves the head only once the store
	// has it, so no point falls between the two reads.
	if err := r.visitHeads(vs, &sel); err != nil {
		return err
	}
	if r.choose(sel) == PlanScan {
		r.c.plansScan.Add(1)
		err = r.visitScan(ctx, sel, vs, v)
	} else {
		r.c.plansSeries.Add(1)
		err = r.visitEach(ctx, sel, vs, v)
	}
	if err != nil {
		return err
	}
	for i := range vs.spans {
		if err := r.visitEnd(vs, i, sel.Start, sel.End, v); err != nil {
			return err
		}
	}
	return nil
}

// maxPooledVisit is the largest head slab putVisitState keeps.
const maxPooledVisit = 1 << 16

func (r *Reader) putVisitState(vs *visitState) {
	clear(vs.spans)
	vs.spans = vs.spans[:0]
	clear(vs.ids)
	if cap(vs.head) > maxPooledVisit {
		vs.head = nil
	}
	r.visits.Put(vs)
}

// visitHeads reads every selected series' head points in the range into
// one slab.
func (r *Reader) visitHeads(vs *visitState, sel *Selection) error {
	vs.spans = resizeSpans(vs.spans, len(sel.Series))
	if r.opts.Head == nil {
		return nil
	}
	vs.head = vs.head[:0]
	offs := append(vs.offs[:0], 0)
	for i := range sel.Series {
		vs.key = append(vs.key[:0], sel.Series[i].TSUID...)
		vs.head = clipTail(r.headPoints(vs.head, vs.key, sel.Start, sel.End), offs[i], sel.Start, sel.End)
		offs = append(offs, len(vs.head))
	}
	vs.offs = offs
	for i := range sel.Series {
		vs.spans[i].head = vs.head[offs[i]:offs[i+1]:offs[i+1]]
	}
	return sel.Budget.AddPoints(len(vs.head))
}

func resizeSpans(s []visitSeries, n int) []visitSeries {
	if cap(s) < n {
		return make([]visitSeries, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// clipTail clips the points appended to pts after from to [start, end].
func clipTail(pts []series.Point, from int, start, end int64) []series.Point {
	kept := clip(pts[from:], start, end)
	n := copy(pts[from:], kept)
	return pts[:from+n]
}

// visitRow gives v series i's stored points of one row (decoded into rr,
// any order of rows' hours but ascending), merged with the head points
// before the row's end.
func (r *Reader) visitRow(rr *rowReader, vs *visitSeries, i int, row []series.Point, base, start, end int64, v Visitor) error {
	row = clip(row, start, end)
	h := 0
	for h < len(vs.head) && vs.head[h].T < base+hourMs {
		h++
	}
	pts := row
	if h > 0 {
		rr.head = mergeHead(rr.head[:0], row, vs.head[:h])
		pts, vs.head = rr.head, vs.head[h:]
	}
	if len(pts) == 0 {
		return nil
	}
	return v.Points(i, pts)
}

// visitEnd gives v series i's head points after its last row and its
// notes.
func (r *Reader) visitEnd(vs *visitState, i int, start, end int64, v Visitor) error {
	s := &vs.spans[i]
	if len(s.head) > 0 {
		if err := v.Points(i, s.head); err != nil {
			return err
		}
		s.head = nil
	}
	if notes := clipNotes(s.notes, start, end); len(notes) > 0 {
		v.Notes(i, notes)
	}
	return nil
}

// visitEach is the per-series plan: workers take series in turn and Get
// their hour rows.
func (r *Reader) visitEach(ctx context.Context, sel Selection, vs *visitState, v Visitor) error {
	if r.inline(&sel) {
		rr := r.getRowReader()
		defer r.putRowReader(rr)
		for i := range sel.Series {
			if err := r.visitSeries(ctx, rr, &sel, vs, i, v); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	work := func() {
		defer wg.Done()
		rr := r.getRowReader()
		defer r.putRowReader(rr)
		for ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= len(sel.Series) {
				return
			}
			if err := r.visitSeries(ctx, rr, &sel, vs, i, v); err != nil {
				cancel(err)
				return
			}
		}
	}
	n := min(r.opts.Parallelism, len(sel.Series))
	wg.Add(n)
	for range n {
		go work()
	}
	wg.Wait()
	return context.Cause(ctx)
}

// visitSeries Gets series i's rows.
func (r *Reader) visitSeries(ctx context.Context, rr *rowReader, sel *Selection, vs *visitState, i int, v Visitor) error {
	s := &sel.Series[i]
	tsuid := []byte(s.TSUID)
	rr.want, rr.notes = sel.Notes, rr.notes[:0]
	sp := spanOf(s)
	first, last := hourRange(&sp, sel.Start, sel.End)
	for h := first; h <= last; h += hourMs {
		var err error
		if rr.store, err = rr.getRow(ctx, rr.store[:0], tsuid, h); err != nil {
			return err
		}
		if err := sel.Budget.AddPoints(len(rr.store)); err != nil {
			return err
		}
		if err := r.visitRow(rr, &vs.spans[i], i, rr.store, h, sel.Start, sel.End, v); err != nil {
			return err
		}
	}
	if len(rr.notes) > 0 {
		vs.spans[i].notes = append(vs.spans[i].notes, rr.notes...)
	}
	return nil
}

// visitScan is the scan plan: every salt bucket of the metric in the
// range, Parallelism buckets at a time.
func (r *Reader) visitScan(ctx context.Context, sel Selection, vs *visitState, v Visitor) error {
	if vs.ids == nil {
		vs.ids = make(map[string]int32, len(sel.Series))
	}
	for i := range sel.Series {
		vs.ids[sel.Series[i].TSUID] = int32(i)
	}
	metric := []byte(sel.Series[0].TSUID[:r.opts.Layout.Widths.Metric])
	return r.forBuckets(ctx, func(ctx context.Context, b int) error {
		return r.visitBucket(ctx, b, metric, &sel, vs, v)
	})
}

// visitBucket reads the rows of metric in one bucket.
func (r *Reader) visitBucket(ctx context.Context, bucket int, metric []byte, sel *Selection, vs *visitState, v Visitor) error {
	l := &r.opts.Layout
	start := l.AppendKeyPrefix(nil, bucket, metric, sel.Start)
	stop := r.stopKey(bucket, metric, sel.End)
	r.c.scans.Add(1)
	sc := r.opts.Data.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop,
		ReadOptions: storage.ReadOptions{Families: r.families}})
	defer sc.Close()
	rs := visitScan{r: r, rr: r.getRowReader(), sel: sel, vs: vs, v: v,
		prefix: l.Salt.Width() + len(metric), cur: -1}
	rs.rr.want = sel.Notes
	// The row buffers live in the pooled rowReader, warm across queries.
	rs.tsuid, rs.arena, rs.offs = append(rs.rr.tsuid[:0], metric...), rs.rr.arena[:0], rs.rr.offs[:0]
	defer func() {
		rs.rr.tsuid, rs.rr.arena, rs.rr.offs = rs.tsuid[:0], rs.arena[:0], rs.offs[:0]
		r.putRowReader(rs.rr)
	}()
	for sc.Next() {
		if err := rs.add(sc.Cell()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return rs.finish()
}

// visitScan groups a scanner's cells into rows and decodes selected rows
// into their series' Visitor.
type visitScan struct {
	r      *Reader
	rr     *rowReader
	sel    *Selection
	vs     *visitState
	v      Visitor
	prefix int // salt + metric width: where the base time starts
	tsuid  []byte
	arena  []byte
	offs   []cellOffs
	cur    int32 // the current row's series; -1: not selected
	base   int64 // seconds
	have   bool
}

// add takes the scanner's next cell.
func (rs *visitScan) add(c storage.Cell) error {
	if !rs.have || !bytes.Equal(c.Row, rs.rr.key) {
		if err := rs.finish(); err != nil {
			return err
		}
		rs.start(c.Row)
	}
	if rs.cur < 0 {
		return nil
	}
	q := len(rs.arena)
	rs.arena = append(rs.arena, c.Qualifier...)
	v := len(rs.arena)
	rs.arena = append(rs.arena, c.Value...)
	rs.offs = append(rs.offs, cellOffs{q: q, v: v, end: len(rs.arena), ts: c.Timestamp})
	return nil
}

// start begins a row.
func (rs *visitScan) start(row []byte) {
	rs.rr.key = append(rs.rr.key[:0], row...)
	rs.have, rs.cur = true, -1
	rs.arena, rs.offs = rs.arena[:0], rs.offs[:0]
	if len(row) < rs.prefix+rowkey.TimestampBytes {
		return
	}
	rs.tsuid = append(rs.tsuid[:rs.prefix-rs.r.opts.Layout.Salt.Width()], row[rs.prefix+rowkey.TimestampBytes:]...)
	if id, ok := rs.vs.ids[string(rs.tsuid)]; ok {
		rs.cur = id
	}
	rs.base = int64(binary.BigEndian.Uint32(row[rs.prefix:]))
}

// finish decodes the current row if it is selected and gives its points.
func (rs *visitScan) finish() error {
	if rs.cur < 0 || len(rs.offs) == 0 {
		return nil
	}
	rr := rs.rr
	rr.cells = rr.cells[:0]
	for _, o := range rs.offs {
		rr.cells = append(rr.cells, rowkey.Cell{Qualifier: rs.arena[o.q:o.v], Value: rs.arena[o.v:o.end], Timestamp: o.ts})
	}
	rs.offs = rs.offs[:0]
	rr.notes = rr.notes[:0]
	rr.store = rr.decode(rr.store[:0], rs.base)
	sp := &rs.vs.spans[rs.cur]
	if len(rr.notes) > 0 {
		sp.notes = append(sp.notes, rr.notes...)
	}
	if err := rs.sel.Budget.AddPoints(len(rr.store)); err != nil {
		return err
	}
	return rs.r.visitRow(rr, sp, int(rs.cur), rr.store, rs.base*1000, rs.sel.Start, rs.sel.End, rs.v)
}
