package read

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// Rollups locate the rollup cells ingest/flush writes (package rollup).
type Rollups struct {
	// Config is the store's rollup configuration. Required.
	Config *rollup.Config
	// Tables holds the table of each of Config.Intervals, in order; the
	// default interval's entry (raw data) is not used and may be nil.
	Tables []storage.Table
}

// CellVisitor receives the cells of a VisitCells: every cell of series i
// (its index in Selection.Series) at once, sorted by time, one per
// interval. A stored cell may lack some aggregates (rollup.Cell.Missing:
// an OpenTSDB row holding only some aggregator columns); the visitor
// skips those it cannot use. The slice is valid only during the call.
// Calls for different series may run at once.
type CellVisitor interface {
	Cells(i int, cells []rollup.Cell) error
}

// CellStats says what a VisitCells read.
type CellStats struct {
	// Table is the rollup table read.
	Table string
	// Rows and Cells count the rollup rows read and the stored cells used.
	Rows, Cells int64
	// RawRanges counts the ranges read raw (range edges and intervals
	// with unflushed points), RawPoints the raw points folded.
	RawRanges, RawPoints int64
}

// Rollups returns the rollup configuration the Reader reads, nil when it
// reads none.
func (r *Reader) Rollups() *rollup.Config {
	if r.opts.Rollups == nil {
		return nil
	}
	return r.opts.Rollups.Config
}

// HasRollupTable reports whether VisitCells can read interval ivIdx of
// the rollup configuration: a configured, non-default interval whose
// table the Reader was given.
func (r *Reader) HasRollupTable(ivIdx int) bool {
	ro := r.opts.Rollups
	return ro != nil && ivIdx >= 0 && ivIdx < len(ro.Config.Intervals) && !ro.Config.Intervals[ivIdx].Default &&
		ivIdx < len(ro.Tables) && ro.Tables[ivIdx] != nil
}

// Table returns the data table's name.
func (r *Reader) Table() string { return r.opts.Data.Spec().Name }

// VisitCells gives v the cells of interval ivIdx (an index in the rollup
// configuration, not the default one) of every selected series in
// [sel.Start, sel.End], exactly the fold of their raw points there:
// stored cells where an interval lies whole in the range and the head
// holds none of its points, raw points (store and head, through the
// core) folded into cells for the rest. See the package doc's Rollups.
func (r *Reader) VisitCells(ctx context.Context, sel Selection, ivIdx int, v CellVisitor) (CellStats, error) {
	var st CellStats
	ro := r.opts.Rollups
	if ro == nil || ivIdx < 0 || ivIdx >= len(ro.Config.Intervals) || ro.Config.Intervals[ivIdx].Default || ro.Tables[ivIdx] == nil {
		return st, errors.New("read: VisitCells: no rollup table for that interval")
	}
	iv := &ro.Config.Intervals[ivIdx]
	st.Table = ro.Tables[ivIdx].Spec().Name
	if len(sel.Series) == 0 {
		return st, nil
	}
	start, err := r.clampStart(ctx, sel.Series[0].TSUID, sel.Start)
	if err != nil || start > sel.End {
		return st, err
	}
	sel.Start = start
	if err := sel.Budget.AddSeries(len(sel.Series)); err != nil {
		return st, err
	}
	raw := r.rawUnits(iv, &sel)
	rc := &rawCells{iv: iv, cells: make([][]rollup.Cell, len(sel.Series)), budget: sel.Budget}
	for _, u := range raw {
		// The raw reads charge their points through rc, not the series
		// again for every range.
		rsel := sel
		rsel.Start, rsel.End, rsel.Notes, rsel.Budget = u.lo, u.hi, false, nil
		if err := r.Visit(ctx, rsel, rc); err != nil {
			return st, err
		}
	}
	st.RawRanges, st.RawPoints = int64(len(raw)), rc.points.Load()
	cs := &cellStream{r: r, iv: iv, tbl: ro.Tables[ivIdx], sel: &sel, raw: raw, rc: rc, v: v}
	err = cs.read(ctx)
	st.Rows, st.Cells = cs.rows.Load(), cs.cells.Load()
	return st, err
}

// unit is a range [lo, hi] (ms, inclusive) read raw.
type unit struct{ lo, hi int64 }

// rawUnits returns, sorted and disjoint, the parts of the range whose
// cells are not read from the rollup table: the partial intervals at its
// edges and every interval holding a head row of any selected series
// (unflushed points, whose cells are not written yet: a row leaves the
// head only after its cells are).
func (r *Reader) rawUnits(iv *rollup.Interval, sel *Selection) []unit {
	var us []unit
	add := func(lo, hi int64) {
		lo, hi = max(lo, sel.Start), min(hi, sel.End)
		if lo <= hi {
			us = append(us, unit{lo, hi})
		}
	}
	cellOf := func(ms int64) (lo, hi int64) {
		base, idx := iv.CellOf(ms)
		lo = iv.CellStart(base, idx)
		return lo, lo + iv.Seconds*1000 - 1
	}
	if lo, _ := cellOf(sel.Start); lo < sel.Start {
		add(sel.Start, lo+iv.Seconds*1000-1)
	}
	if lo, hi := cellOf(sel.End); hi > sel.End {
		add(lo, sel.End)
	}
	if h := r.opts.Head; h != nil {
		var refs []series.RowRef
		for i := range sel.Series {
			refs = h.AppendRows(refs[:0], []byte(sel.Series[i].TSUID), sel.Start, maxtOf(sel.End))
			for _, ref := range refs {
				lo, _ := cellOf(ref.Base)
				_, hi := cellOf(ref.Base + hourMs - 1)
				add(lo, hi)
			}
		}
	}
	slices.SortFunc(us, func(a, b unit) int { return cmpInt(a.lo, b.lo) })
	out := us[:0]
	for _, u := range us {
		if n := len(out); n > 0 && u.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, u.hi)
			continue
		}
		out = append(out, u)
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// covered reports whether the cell starting at t lies in a raw unit or
// outside the range, so its stored form must not be used.
func covered(raw []unit, sel *Selection, t, end int64) bool {
	if t < sel.Start || end > sel.End {
		return true
	}
	i := sort.Search(len(raw), func(i int) bool { return raw[i].hi >= t })
	return i < len(raw) && raw[i].lo <= end
}

// rawCells folds the raw points of the raw units into cells, per series
// (a Visitor: a series' rows arrive in time order from one goroutine).
type rawCells struct {
	iv     *rollup.Interval
	cells  [][]rollup.Cell
	budget *Budget
	points atomic.Int64
}

// Points implements Visitor: each row is folded on its own, then merged
// with the series' last cell when both fall in one interval.
func (rc *rawCells) Points(i int, pts []series.Point) error {
	rc.points.Add(int64(len(pts)))
	if err := rc.budget.AddPoints(len(pts)); err != nil {
		return err
	}
	base := rc.iv.BaseTime(floorDivMs(pts[0].T))
	n := len(rc.cells[i])
	rc.cells[i] = rollup.Fold(rc.cells[i], rc.iv, base, pts)
	if n > 0 && len(rc.cells[i]) > n && rc.cells[i][n-1].T == rc.cells[i][n].T {
		// The row's first cell continues the one before: fold the two.
		m := rollup.FoldCells(nil, rc.iv, base, rc.cells[i][n-1:n+1])
		rc.cells[i][n-1] = m[0]
		rc.cells[i] = slices.Delete(rc.cells[i], n, n+1)
	}
	return nil
}

// Notes implements Visitor; raw units read no notes.
func (rc *rawCells) Notes(int, []Note) {}

func floorDivMs(ms int64) int64 {
	if ms < 0 && ms%1000 != 0 {
		return ms/1000 - 1
	}
	return ms / 1000
}

// cellStream reads the selected series' rollup rows, a Get per row and
// series on the Reader's workers (forSeries, as the core's per-series
// plan), and gives each series' stored cells merged with its raw ones to
// the visitor.
type cellStream struct {
	r     *Reader
	iv    *rollup.Interval
	tbl   storage.Table
	sel   *Selection
	raw   []unit
	rc    *rawCells
	v     CellVisitor
	rows  atomic.Int64
	cells atomic.Int64
}

// read reads the cells by the plan the Reader's planner picks for the
// selection (Reader.Choose): a Get per rollup row and series, or a scan
// of the rollup table per salt bucket.
func (cs *cellStream) read(ctx context.Context) error {
	if p := cs.r.plan(cs.sel); p == PlanScan {
		return cs.scanCells(ctx)
	}
	return cs.r.forSeries(ctx, cs.sel, cs)
}

// run implements task: it reads series i's cells with rr's buffers.
func (cs *cellStream) run(ctx context.Context, rr *rowReader, i int) error {
	return cs.worker(rr).series(ctx, i)
}

// cellWorker is a worker's buffers for rollup rows, kept in its
// rowReader (rowReader.cw) so VisitCells runs on the workers every read
// shares; the row key and the Get buffers are the rowReader's own.
type cellWorker struct {
	cs       *cellStream // the read it serves, nil in the pool
	g        *rowReader  // the rowReader holding it
	rr       rollup.RowReader
	row, out []rollup.Cell
	idsSet   bool
}

// worker returns rr's rollup buffers, set to read for cs.
func (cs *cellStream) worker(rr *rowReader) *cellWorker {
	w := &rr.cw
	w.cs, w.g = cs, rr
	return w
}

// series reads series i's rollup rows over the range.
func (w *cellWorker) series(ctx context.Context, i int) error {
	cs := w.cs
	iv, sel := cs.iv, cs.sel
	s := &sel.Series[i]
	w.out = w.out[:0]
	raw := cs.rc.cells[i]
	var err error
	if w.g.key, err = cs.r.opts.Layout.AppendRowKeyFromTSUID(w.g.key[:0], []byte(s.TSUID), 0); err != nil {
		return fmt.Errorf("read: series %x: %w", s.TSUID, err)
	}
	first, last := sel.Start, sel.End
	if s.HasSpan { // stored rows lie in the series' span of hours
		first, last = max(first, s.First*1000), min(last, s.Last*1000+hourMs-1)
	}
	if first <= last {
		for base := iv.BaseTime(floorDivMs(first)); base*1000 <= last; base = iv.NextBase(base) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := w.readRow(ctx, base); err != nil {
				return err
			}
		}
	}
	// The stored cells and the raw ones never share an interval
	// (covered), so a merge by time is their union.
	stored := w.out
	merged := mergeCells(w.row[:0], stored, raw)
	w.row = merged
	cs.cells.Add(int64(len(stored)))
	if len(merged) == 0 {
		return nil
	}
	return cs.v.Cells(i, merged)
}

// readRow Gets the rollup row of the series at base (seconds) and keeps
// its usable cells in w.out.
func (w *cellWorker) readRow(ctx context.Context, base int64) error {
	cs := w.cs
	g := w.g
	rollup.SetBaseTime(&cs.r.opts.Layout, g.key, base)
	cells, buf, err := cs.tbl.GetAppend(ctx, g.got[:0], g.gotBuf[:0], g.key, &g.ropts)
	g.got, g.gotBuf = cells, buf
	cs.r.c.gets.Add(1)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read: rollup row %x of %s: %w", g.key, cs.tbl.Spec().Name, err)
	}
	cs.rows.Add(1)
	n := len(w.out)
	w.out = w.usable(w.out, base, cells)
	return cs.sel.Budget.AddPoints(len(w.out) - n)
}

// decodeRow appends the usable cells of a rollup row, in any form tsd
// reads (rollup.RowReader: the rule the flusher reads by too), to dst;
// columns that do not decode are skipped, counted corrupt and logged.
func (w *cellWorker) decodeRow(dst []rollup.Cell, base int64, cells []storage.Cell) []rollup.Cell {
	cs := w.cs
	if !w.idsSet {
		w.rr.IDs, w.idsSet = cs.r.opts.Rollups.Config.IDs(), true
		w.rr.Partial = true // consumers use the cells holding what they need
	}
	out, bad := w.rr.Decode(dst, cs.iv, base, cells)
	if bad > 0 {
		cs.r.c.corrupt.Add(int64(bad))
		cs.r.opts.Logger.Warn("read: skipping rollup columns that do not decode", "table", cs.tbl.Spec().Name,
			"row", fmt.Sprintf("%x", w.g.key), "columns", bad)
	}
	return out
}
