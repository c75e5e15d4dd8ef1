package promql

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/series"
)

// Rollup cells for pushed-down windows. A window (e−R, e] whose range R
// and step are whole intervals of a rollup table, and whose start e−R is a
// cell's start, is the union of the cells [e−R, e) less the raw point at
// exactly e−R, plus the raw point at exactly e. The cells come from
// read.VisitCells (stored cells, the head's hours and unwritten ones
// folded raw); the two edge points are the first points of the cells
// starting at e−R and at e (rollup.Cell.First; so the cells are read up to
// the end of the one starting at the last e), read raw (one Get of the
// row that holds each) only where such a cell does not know its first
// point (OpenTSDB columns, cells written before cells kept it). Sum and
// avg subtract and add them; min and max add the point at e and read the
// window raw when the point at e−R is its first cell's extreme (a cell
// does not say which of its points the extreme is).

// rollupFor returns the index in the rollup configuration of the interval
// whose cells answer pd, or -1: the longest interval that divides the
// range and the step and starts a cell at every window's start, of a
// function cells hold.
func (qr *querier) rollupFor(pd *pushdown) int {
	if qr.q.opts.DisableRollups || pd == nil {
		return -1
	}
	switch pd.fn {
	case fnSum, fnAvg, fnMin, fnMax, fnCount:
	default:
		return -1
	}
	r := qr.q.opts.Reader
	cfg := r.Rollups()
	if cfg == nil || pd.first-pd.rng < 0 || pd.last > MaxTime {
		return -1
	}
	best := -1
	for i := range cfg.Intervals {
		iv := &cfg.Intervals[i]
		ms := iv.Seconds * 1000
		if !r.HasRollupTable(i) || pd.rng%ms != 0 || pd.step%ms != 0 || !alignedWindows(iv, pd) {
			continue
		}
		if best < 0 || iv.Seconds > cfg.Intervals[best].Seconds {
			best = i
		}
	}
	return best
}

// alignedWindows reports whether every window of pd starts a cell of iv.
func alignedWindows(iv *rollup.Interval, pd *pushdown) bool {
	for e := pd.first; e <= pd.last; e += pd.step {
		s := e - pd.rng
		base, idx := iv.CellOf(s)
		if iv.CellStart(base, idx) != s {
			return false
		}
		if pd.step == 0 {
			break
		}
	}
	return true
}

// rollupWindows is the windows of a metricRead's series evaluated from
// rollup cells, once, when the engine iterates the first of them.
type rollupWindows struct {
	once  sync.Once
	use   bool // the Select reads cells of interval ivIdx
	ivIdx int
	pts   [][]sample
	err   error
	st    read.CellStats
}

// rollupIterator walks series fi's windows evaluated from cells.
func (s *tsdSeries) rollupIterator(reuse chunkenc.Iterator) chunkenc.Iterator {
	pts, err := s.mr.rollupWindows(s.fi)
	if err != nil {
		return NewIterator(errIterator{err})
	}
	it, ok := reuse.(*samplesIter)
	if !ok {
		it = &samplesIter{}
	}
	it.reset(pts)
	return it
}

// rollupWindows returns series fi's windows, evaluating every series of
// mr on the first call.
func (mr *metricRead) rollupWindows(fi int) ([]sample, error) {
	rw := &mr.rw
	rw.once.Do(func() { rw.err = mr.evalRollup() })
	if rw.err != nil {
		return nil, rw.err
	}
	return rw.pts[fi], nil
}

// evalRollup reads the cells of every series of mr and folds them into
// windows: as VisitCells hands each series' cells over, where the cells
// alone answer every window, else afterwards with the edge points and
// windows that must be read raw.
func (mr *metricRead) evalRollup() error {
	qr, pd := mr.qr, mr.pd
	r := qr.q.opts.Reader
	n := len(mr.sel.Series)
	ws := &windowSink{mr: mr, pts: make([][]sample, n), cells: make([][]rollup.Cell, n)}
	ivMs := r.Rollups().Intervals[mr.rw.ivIdx].Seconds * 1000
	sel := mr.sel
	// Up to the end of the cell starting at the last window's end: its
	// first point is the point entering that window.
	sel.Start, sel.End = pd.first-pd.rng, pd.last+ivMs-1
	// The planner picks a Get per row and series unless it knows the
	// selection is most of its metric (then a scan of the rollup table
	// per salt bucket: a seek per bucket instead of one per row).
	sel.MetricSeries = qr.metricSeries(mr.ctx, &sel)
	st, err := r.VisitCells(mr.ctx, sel, mr.rw.ivIdx, ws)
	if err != nil {
		return err
	}
	mr.rw.st, mr.rw.pts = st, ws.pts
	err = mr.evalKept(ws.cells)
	qr.noteRollup(st)
	return err
}

// evalKept folds the series whose cells the visit kept (cells[i] non-nil)
// into windows, reading raw the windows' edges whose point no cell knows
// (cells of an older encoding, OpenTSDB columns) and the windows the
// cells cannot answer.
func (mr *metricRead) evalKept(cells [][]rollup.Cell) error {
	var kept []int
	for i := range cells {
		if cells[i] != nil {
			kept = append(kept, i)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	qr, pd := mr.qr, mr.pd
	ts := rawEdges(pd, cells)
	var edges [][]series.Point
	if len(ts) > 0 {
		esel := mr.sel
		esel.Start, esel.End = ts[0], ts[len(ts)-1]
		var err error
		if edges, err = qr.q.opts.Reader.PointsAt(mr.ctx, esel, ts); err != nil {
			return err
		}
		qr.q.stats.rollupRawEdges.Add(int64(len(ts)))
	}
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	work := func() {
		ev := rollupEval{mr: mr, read: true}
		for {
			k := int(next.Add(1) - 1)
			if k >= len(kept) {
				break
			}
			i := kept[k]
			var edge []series.Point
			if edges != nil {
				edge = edges[i]
			}
			pts, _, err := ev.series(i, cells[i], ts, edge)
			if err != nil {
				errMu.Lock()
				if first == nil {
					first = err
				}
				errMu.Unlock()
				return
			}
			mr.rw.pts[i] = pts
		}
		qr.q.stats.rollupRawWindows.Add(ev.raw)
	}
	for range min(runtime.GOMAXPROCS(0), len(kept)/seriesPerWorker) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return first
}

// windowEdges calls f with every window edge of pd (starts and ends; not
// sorted when windows overlap).
func windowEdges(pd *pushdown, f func(t int64)) {
	last := int64(math.MinInt64)
	for e := pd.first; e <= pd.last; e += pd.step {
		if e-pd.rng != last {
			f(e - pd.rng)
		}
		f(e)
		last = e
		if pd.step == 0 {
			break
		}
	}
}

// rawEdges returns, sorted, the window edges of pd where a series has a
// cell starting there that does not know its first point.
func rawEdges(pd *pushdown, cells [][]rollup.Cell) []int64 {
	var unknown map[int64]bool
	for i := range cells {
		for j := range cells[i] {
			if c := &cells[i][j]; c.Edge == rollup.EdgeUnknown {
				if unknown == nil {
					unknown = map[int64]bool{}
				}
				unknown[c.T] = true
			}
		}
	}
	var ts []int64
	if unknown == nil {
		return ts
	}
	windowEdges(pd, func(t int64) {
		if unknown[t] {
			ts = append(ts, t)
		}
	})
	slices.Sort(ts)
	return slices.Compact(ts)
}

// cellCursor finds the cells starting at nondecreasing times.
type cellCursor struct {
	cells []rollup.Cell
	j     int
}

// at returns the cell starting at t, or nil.
func (cc *cellCursor) at(t int64) *rollup.Cell {
	for cc.j < len(cc.cells) && cc.cells[cc.j].T < t {
		cc.j++
	}
	if cc.j < len(cc.cells) && cc.cells[cc.j].T == t {
		return &cc.cells[cc.j]
	}
	return nil
}

// windowSink folds each series' cells into its windows as VisitCells
// hands them over (in the scan's workers, without copying them), and
// keeps a copy of the cells of a series that needs raw reads: a cell at
// a window's edge that does not know its first point, or a window the
// cells cannot answer.
type windowSink struct {
	mr    *metricRead
	pts   [][]sample      // series i's windows, once folded
	cells [][]rollup.Cell // series i's cells kept for evalKept
}

// Cells implements read.CellVisitor.
func (ws *windowSink) Cells(i int, cells []rollup.Cell) error {
	if !edgeUnknown(cells) {
		ev := rollupEval{mr: ws.mr}
		if pts, ok, err := ev.series(i, cells, nil, nil); err != nil || ok {
			ws.pts[i] = pts
			return err
		}
	}
	ws.cells[i] = append(make([]rollup.Cell, 0, max(len(cells), 1)), cells...)
	return nil
}

// edgeUnknown reports whether a cell does not know its first point.
func edgeUnknown(cells []rollup.Cell) bool {
	for i := range cells {
		if cells[i].Edge == rollup.EdgeUnknown {
			return true
		}
	}
	return false
}

// rollupEval is one goroutine's evaluation of series' windows.
type rollupEval struct {
	mr   *metricRead
	read bool  // windows the cells cannot answer are read raw
	raw  int64 // windows read raw
}

// series folds series i's cells and its points at the edge times ts
// (T read.NoPoint where it has none; ts are the edges no cell knows) into
// one sample per non-empty window. Without ev.read, ok is false when a
// window must be read raw.
func (ev *rollupEval) series(i int, cells []rollup.Cell, ts []int64, edge []series.Point) (out []sample, ok bool, err error) {
	pd := ev.mr.pd
	nw := 1
	if pd.step > 0 {
		nw = int((pd.last-pd.first)/pd.step) + 1
	}
	out = make([]sample, 0, min(nw, 2*len(cells)+1))
	// at returns the point at exactly t (not a staleness marker): the
	// first point of the cell starting at t, none without such a cell
	// (the cells are the fold of every point up to the last window's
	// end's cell), or the raw point read at t.
	// The window starts and ends are each nondecreasing.
	starts, ends := cellCursor{cells: cells}, cellCursor{cells: cells}
	at := func(cc *cellCursor, t int64) (series.Point, bool) {
		c := cc.at(t)
		switch {
		case c == nil || c.Edge == rollup.EdgeNone:
			return series.Point{}, false
		case c.Edge == rollup.EdgePoint:
			return c.First, true
		}
		k, ok := slices.BinarySearch(ts, t)
		if !ok || edge == nil {
			return series.Point{}, false
		}
		p := edge[k]
		return p, p.T == t && !isStale(&p)
	}
	j := 0
	for e := pd.first; e <= pd.last; e += pd.step {
		lo := e - pd.rng
		for j < len(cells) && cells[j].T < lo {
			j++
		}
		k := j
		for k < len(cells) && cells[k].T < e {
			k++
		}
		ps, hasS := at(&starts, lo)
		pe, hasE := at(&ends, e)
		v, ok, fallback := combine(pd.fn, cells[j:k], ps, hasS, pe, hasE)
		if fallback {
			if !ev.read {
				return nil, false, nil
			}
			ev.raw++
			if v, ok, err = ev.rawWindow(i, e); err != nil {
				return nil, false, err
			}
		}
		if ok {
			out = append(out, sample{t: e, v: v})
		}
		j = k
		if pd.step == 0 {
			break
		}
	}
	return out, true, nil
}

// rawWindow evaluates window (e−R, e] of series i from its raw points.
func (ev *rollupEval) rawWindow(i int, e int64) (float64, bool, error) {
	mr, pd := ev.mr, ev.mr.pd
	it := mr.qr.q.opts.Reader.Iterator(mr.ctx, mr.sel.Series[i], e-pd.rng+1, e, mr.sel.Budget)
	defer it.Close()
	one := pushdown{fn: pd.fn, first: e, last: e, rng: pd.rng}
	var w windowIter
	w.reset(it, &one)
	if w.Next() != chunkenc.ValFloat {
		return 0, false, it.Err()
	}
	return w.v, true, it.Err()
}

// combine is fn over the window made of cells (those in [e−R, e)) less
// the point ps at e−R (when hasS) plus the point pe at e (when hasE): ok
// is false for an empty window, fallback true when the cells cannot give
// the exact answer and the window must be read raw.
func combine(fn rangeFunc, cells []rollup.Cell, ps series.Point, hasS bool, pe series.Point, hasE bool) (v float64, ok, fallback bool) {
	n := int64(0)
	for i := range cells {
		if cells[i].Missing != 0 && (fn != fnCount || !cells[i].Has(rollup.Count)) {
			return 0, false, true // an OpenTSDB row with some aggregators only
		}
		n += cells[i].Count
	}
	if hasS {
		if len(cells) == 0 || cells[0].T != ps.T {
			return 0, false, true // a cell must hold it: read raw
		}
		n--
	}
	if hasE {
		n++
	}
	if n <= 0 {
		return 0, false, false
	}
	switch fn {
	case fnCount:
		return float64(n), true, false
	case fnSum, fnAvg:
		return sumCells(fn, cells, ps, hasS, pe, hasE)
	case fnMin, fnMax:
		return extremeCells(fn == fnMax, cells, ps, hasS, pe, hasE)
	}
	return 0, false, true
}

// sumCells is combine for sum and avg: an exact integer sum while every
// cell's sum and both edges are integers within ±2^53 (the state the
// pushed-down loop reaches on the same points), else a Kahan-Neumaier sum
// of the cells' sums, which matches the raw loop within rounding.
func sumCells(fn rangeFunc, cells []rollup.Cell, ps series.Point, hasS bool, pe series.Point, hasE bool) (float64, bool, bool) {
	var a agg
	var cnt int64
	exact := true
	var is int64
	addInt := func(x int64) {
		s := is + x
		if x > exactInt || x < -exactInt || s > exactInt || s < -exactInt {
			exact = false
			return
		}
		is = s
	}
	for i := range cells {
		c := &cells[i]
		cnt += c.Count
		if exact && c.Sum.Kind == series.Int {
			addInt(int64(c.Sum.Bits))
		} else {
			exact = false
		}
	}
	if hasS {
		cnt--
		if exact && ps.Kind == series.Int {
			addInt(-int64(ps.Bits))
		} else {
			exact = false
		}
	}
	if hasE {
		cnt++
		if exact && pe.Kind == series.Int {
			addInt(int64(pe.Bits))
		} else {
			exact = false
		}
	}
	if exact {
		a.is, a.in = is, cnt
		return a.result(fn), true, false
	}
	var sum, c float64
	inc := func(f float64) {
		t := sum + f
		switch {
		case math.Abs(sum) >= math.Abs(f):
			c += (sum - t) + f
		default:
			c += (f - t) + sum
		}
		sum = t
	}
	for i := range cells {
		inc(cells[i].Sum.Float())
	}
	if hasS {
		inc(-ps.Float())
	}
	if hasE {
		inc(pe.Float())
	}
	if math.IsInf(sum, 0) || math.IsNaN(sum) || math.IsNaN(c) {
		return 0, false, true // overflow and NaN follow the raw loop's order
	}
	a.mixed, a.n, a.v, a.c = true, float64(cnt), sum, c
	return a.result(fn), true, false
}

// extremeCells is combine for min and max.
func extremeCells(max bool, cells []rollup.Cell, ps series.Point, hasS bool, pe series.Point, hasE bool) (float64, bool, bool) {
	var m series.Point
	have := false
	take := func(p series.Point) {
		if !have || better(p, m, max) {
			m, have = p, true
		}
	}
	for i := range cells {
		e := cells[i].Min
		if max {
			e = cells[i].Max
		}
		if i == 0 && hasS {
			x, y := ps.Float(), e.Float()
			if x == y || math.IsNaN(x) || math.IsNaN(y) {
				return 0, false, true // the point leaving may be the extreme
			}
		}
		take(e)
	}
	if hasE {
		take(pe)
	}
	if !have {
		return 0, false, false
	}
	return m.Float(), true, false
}

// better reports whether v replaces cur as the extreme, as
// max_over_time and min_over_time do: numerically, a NaN replaced by
// any number, ties keeping cur.
func better(v, cur series.Point, max bool) bool {
	x, y := v.Float(), cur.Float()
	switch {
	case math.IsNaN(y):
		return !math.IsNaN(x)
	case max:
		return x > y
	}
	return x < y
}

// noteRollup counts a Select answered from rollup cells.
func (qr *querier) noteRollup(st read.CellStats) {
	s := &qr.q.stats
	s.rollupSelects.Add(1)
	s.rollupCells.Add(st.Cells)
	s.rollupRawRanges.Add(st.RawRanges)
	qr.q.tables.add(st.Table)
}
