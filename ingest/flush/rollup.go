package flush

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// RollupOptions turn on the rollups tsd computes from raw rows.
type RollupOptions struct {
	// Config is the rollup configuration. Required.
	Config *rollup.Config
	// Tables holds the table of each of Config.Intervals, in order; the
	// default interval's entry (raw data) is not used and may be nil.
	Tables []storage.Table
	// SoleWriter says that nothing but this Flusher and its Compactor
	// writes the rollup tables' cells of the series it flushes (one
	// daemon on its own Pebble store; not two daemons on one Bigtable).
	// In the dense format a sole writer then keeps recently written rows
	// in memory (CacheRows), writes each rollup row whole as one packed
	// column and reads nothing back after its writes. Default false: each
	// cell is its own column, and what was computed from stored rows is
	// read again after the write (safe with other writers).
	SoleWriter bool
	// CacheRows bounds the rows a sole writer keeps (at most about 500
	// bytes each for a day of 1h cells). Default DefaultRollupCacheRows;
	// -1 keeps none (every row is read before it is rewritten).
	CacheRows int
}

// RollupStats count what the rollup writer did.
type RollupStats struct {
	// Rows counts the rollup rows rewritten, Cells the cells they were
	// given.
	Rows, Cells int64
	// SourceReads counts raw rows read back to fold (late rows).
	SourceReads int64
	// Conflicts counts packed rows another writer changed between read
	// and check-and-put (each retried).
	Conflicts int64
	// BadCells counts stored rollup cells that did not decode and were
	// replaced.
	BadCells int64
}

func (s *RollupStats) add(o RollupStats) {
	s.Rows += o.Rows
	s.Cells += o.Cells
	s.SourceReads += o.SourceReads
	s.Conflicts += o.Conflicts
	s.BadCells += o.BadCells
}

// rollupTrustHead bounds the age of a row whose cells are folded from the
// head's points without reading the row back: the head remembers 64
// hours of flushed rows per series.
const rollupTrustHead = 60 * rowkey.RowSpanMs

// derivedInterval is an interval folded from the stored cells of a finer
// one (a day from its hours).
type derivedInterval struct{ iv, src int }

// rollupWriter recomputes the rollup cells of raw rows and writes them
// whole: the cells of the intervals that divide an hour from the row's
// points, and each longer interval's cell from the finer cells of its
// span, read back from their table. Every cell is a function of raw
// points, never an increment, and is written blindly as its own columns
// (a batch in one Apply), so a row rewritten twice (a replay, a crash
// between the data and the rollup write, a compaction) gives the same
// cells. What was computed from stored rows (a raw row read back, a day
// folded from its hours) is read again after the write and computed
// again if another writer changed it meanwhile (rollup.go's writeJobs
// says why that converges). The Flusher and the Compactor share one
// writer; its lock orders their batches.
type rollupWriter struct {
	mu      sync.Mutex
	startMs int64 // when the flusher started: hours before it are read back
	opts    *FlushOptions
	cfg     *rollup.Config
	tables  []storage.Table
	ids     rollup.AggIDs
	direct  []int
	derived []derivedInterval
	log     *slog.Logger

	dec   rowkey.RowDecoder
	rrd   rollup.RowReader
	rdec  rollup.RowDecoder
	renc  rollup.RowEncoder
	cache *rowCache // a sole writer's rows (dense format), else nil
	// sole is RollupOptions.SoleWriter: in the opentsdb format the other
	// widths of a cell's columns are then deleted only where they exist.
	sole     bool
	present  map[string]bool // presentColumns' result, reused
	presC    []storage.Cell
	presB    []byte
	skey     []byte
	pts      []series.Point
	getC     []storage.Cell
	getB     []byte
	arena    []byte
	fresh    []rollup.Cell
	from     []rollup.Cell // derivedCached's source cells
	derivedC []rollup.Cell // derivedCached's folded cells
	// foldAppends counts the longer cells folded from a cached fold and
	// appended cells (wholeRowCells), for tests.
	foldAppends int64
	// grouped counts the batches whose raw columns went in the rollup
	// cells' storage.ApplyGroup (one commit on Pebble), for tests.
	grouped int64
	// A sole writer's batch (writeCached): its rows, reused; the keys
	// of its rollup rows, its cell columns' qualifiers and values, and
	// their storage cells, valid until the batch is written.
	batch     map[string]*batchRow
	order     []*batchRow
	idBuf     []byte
	keys      []byte
	cellArena []byte
	cellSlab  []storage.Cell
	jobCells  [][]rollup.Cell // flushNoted's, per job and direct interval
	pending   []pendingRollup
	// pre is written with the batch's first rollup write (a sole
	// writer's raw columns, storage.ApplyGroup), then cleared.
	pre   []storage.TableMutations
	jobs  []rollupJob
	total RollupStats
}

// pendingRollup is a raw row written by a flush whose cells are still to
// be written: folded from the head's points (cells in fresh), or read
// back from the store.
type pendingRollup struct {
	key     [2]int // raw row key in arena
	baseSec int64
	read    bool
	spans   [8][2]int // per direct interval, its cells in fresh
	open    uint64    // rollupJob.open
}

// rollupJob is one raw row's cells on their way to the store.
type rollupJob struct {
	key         []byte
	baseSec     int64
	read        bool            // the cells come from the stored row
	derivedOnly bool            // the direct cells are written already
	cells       [][]rollup.Cell // per direct interval, the hour's cells
	// open has bit k set when the cell of derived interval k holding
	// the hour is left to a later flush (heldRanges): a sole writer's.
	open uint64
}

// newRollupWriter checks o against the configuration and sorts its
// intervals: those dividing an hour fold raw points; each longer one that
// is a whole number of hours folds the cells of the longest computed
// interval dividing it; others are not computed (warned once).
func newRollupWriter(fo *FlushOptions, o *RollupOptions, log *slog.Logger) (*rollupWriter, error) {
	if o == nil || o.Config == nil {
		return nil, nil
	}
	if len(o.Tables) != len(o.Config.Intervals) {
		return nil, fmt.Errorf("ingest: rollups: %d tables for %d intervals", len(o.Tables), len(o.Config.Intervals))
	}
	w := &rollupWriter{opts: fo, cfg: o.Config, tables: o.Tables, ids: o.Config.IDs(), log: log, sole: o.SoleWriter}
	if o.SoleWriter && fo.Format != schema.FormatOpenTSDB {
		n := o.CacheRows
		switch {
		case n == 0:
			n = DefaultRollupCacheRows
		case n < 0:
			n = 0
		}
		w.cache = newRowCache(n)
	}
	for i := range o.Config.Intervals {
		iv := &o.Config.Intervals[i]
		if iv.Default {
			continue
		}
		if o.Tables[i] == nil {
			return nil, fmt.Errorf("ingest: rollups: no table for interval %s", iv.Name)
		}
		switch {
		case rowkey.RowSpan%iv.Seconds == 0:
			w.direct = append(w.direct, i)
		default:
			if src := w.sourceOf(i); src >= 0 {
				w.derived = append(w.derived, derivedInterval{iv: i, src: src})
			} else {
				log.Warn("ingest: rollups: interval neither divides an hour nor is folded from a finer configured interval; tsd does not compute it", "interval", iv.Name)
			}
		}
	}
	if len(w.direct) > len(pendingRollup{}.spans) {
		return nil, fmt.Errorf("ingest: rollups: at most %d intervals shorter than an hour", len(pendingRollup{}.spans))
	}
	// Derived intervals in increasing length, so a source is written
	// before what folds it.
	slices.SortStableFunc(w.derived, func(a, b derivedInterval) int {
		return int(o.Config.Intervals[a.iv].Seconds - o.Config.Intervals[b.iv].Seconds)
	})
	return w, nil
}

// sourceOf returns the longest computed interval (not the default) that
// divides interval i, or -1.
func (w *rollupWriter) sourceOf(i int) int {
	iv := &w.cfg.Intervals[i]
	if iv.Seconds%rowkey.RowSpan != 0 {
		return -1
	}
	best := -1
	for j := range w.cfg.Intervals {
		s := &w.cfg.Intervals[j]
		if j == i || s.Default || s.Seconds >= iv.Seconds || iv.Seconds%s.Seconds != 0 {
			continue
		}
		if s.Seconds%rowkey.RowSpan != 0 && rowkey.RowSpan%s.Seconds != 0 {
			continue
		}
		if best < 0 || s.Seconds > w.cfg.Intervals[best].Seconds {
			best = j
		}
	}
	if best >= 0 && rowkey.RowSpan%w.cfg.Intervals[best].Seconds != 0 && w.sourceOf(best) < 0 {
		return -1 // it is not computed either
	}
	return best
}

// stats returns the totals.
func (w *rollupWriter) stats() RollupStats {
	if w == nil {
		return RollupStats{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// compacted writes the cells of a raw row the compactor just read: they
// are read again, since another writer may add to the row meanwhile.
func (w *rollupWriter) compacted(ctx context.Context, key []byte, baseSec int64, ts int64) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var st RollupStats
	w.jobs = append(w.jobs[:0], rollupJob{key: key, baseSec: baseSec, read: true})
	err := w.writeJobs(ctx, w.jobs, ts, &st)
	w.total.add(st)
	return err
}

// note records a raw row the flush is writing: pts are its points when
// they are the row's full set, else nil, and the row is read back after
// the write; open is heldRanges'. Cheap: it folds the points into the
// short intervals' cells and copies the key.
func (w *rollupWriter) note(tsuid []byte, baseSec int64, pts []series.Point, open uint64) error {
	p := pendingRollup{baseSec: baseSec, read: pts == nil, open: open}
	p.key[0] = len(w.arena)
	var err error
	if w.arena, err = w.opts.Layout.AppendRowKeyFromTSUID(w.arena, tsuid, baseSec*1000); err != nil {
		return fmt.Errorf("ingest: rollups: row key of series %x: %w", tsuid, err)
	}
	p.key[1] = len(w.arena)
	if pts != nil {
		for k, i := range w.direct {
			iv := &w.cfg.Intervals[i]
			p.spans[k][0] = len(w.fresh)
			w.fresh = rollup.Fold(w.fresh, iv, iv.BaseTime(baseSec), pts)
			p.spans[k][1] = len(w.fresh)
		}
	}
	w.pending = append(w.pending, p)
	return nil
}

// heldRanges returns, for a sole writer with a row cache, the derived
// intervals (bit k for w.derived[k], the first 64) whose cell holding the
// hour at baseSec still holds a row of the series in the head (holds
// reports one, DetachedRow.HoldsRowIn): that cell is left to the flush of
// the last such row, which folds it from every hour then stored. Readers
// read a cell's range raw while the head holds a row in it
// (query/read's VisitCells), so a cell left stale meanwhile is never
// read; and a day then costs one write of its cell, not one per hour.
// With other writers every cell is written: another daemon's reader does
// not see this head.
func (w *rollupWriter) heldRanges(baseSec int64, holds func(lo, hi int64) bool) uint64 {
	if w.cache == nil {
		return 0
	}
	var m uint64
	for k, d := range w.derived[:min(len(w.derived), 64)] {
		iv := &w.cfg.Intervals[d.iv]
		base, idx := iv.CellOf(baseSec * 1000)
		lo := iv.CellStart(base, idx)
		if holds(lo, lo+iv.Seconds*1000) {
			m |= 1 << k
		}
	}
	return m
}

// readsBack reports whether a noted row's cells are to be folded from the
// stored row.
func (w *rollupWriter) readsBack() bool {
	for i := range w.pending {
		if w.pending[i].read {
			return true
		}
	}
	return false
}

// derivedFromDirect reports whether every longer interval folds cells of
// an interval computed from raw points, so a batch's longer cells need no
// read of what the batch writes.
func (w *rollupWriter) derivedFromDirect() bool {
	for _, d := range w.derived {
		if !w.isDirect(d.src) {
			return false
		}
	}
	return true
}

// reset forgets the noted rows (a batch that was not written).
func (w *rollupWriter) reset() {
	w.pending, w.fresh, w.arena = w.pending[:0], w.fresh[:0], w.arena[:0]
	clear(w.pre)
	w.pre = w.pre[:0]
}

// flushNoted writes the cells of the rows noted since the last reset, then
// resets. On an error the caller writes the raw rows again (they come
// back queued), so the cells are computed again later.
func (w *rollupWriter) flushNoted(ctx context.Context, ts int64, st *RollupStats) error {
	defer w.reset()
	w.jobs, w.jobCells = w.jobs[:0], w.jobCells[:0]
	for _, p := range w.pending {
		j := rollupJob{key: w.arena[p.key[0]:p.key[1]], baseSec: p.baseSec, read: p.read, open: p.open}
		if !p.read {
			n := len(w.jobCells)
			for k := range w.direct {
				w.jobCells = append(w.jobCells, w.fresh[p.spans[k][0]:p.spans[k][1]:p.spans[k][1]])
			}
			j.cells = w.jobCells[n:len(w.jobCells):len(w.jobCells)]
		}
		w.jobs = append(w.jobs, j)
	}
	return w.writeJobs(ctx, w.jobs, ts, st)
}

// writeJobs writes the cells of jobs: the short intervals' cells in one
// Apply, then the longer intervals' cells folded from the stored ones in
// another, then reads again what they were computed from (raw rows read
// back, and the source cells of each longer cell) and writes again the
// jobs whose inputs changed meanwhile, until none did.
//
// Why that converges with other writers: a cell is written blindly, so the
// last write of it wins. Take the last write W of a cell, by writer X,
// computed from inputs X read before W. X read them again after W and
// found them unchanged, or it would have written again. A writer that
// changed an input after that second read computes the cell again after
// its own change, so its write of the cell follows W: a contradiction.
// So W was computed from the inputs as they finally are.
func (w *rollupWriter) writeJobs(ctx context.Context, jobs []rollupJob, ts int64, st *RollupStats) error {
	if w.cache != nil {
		return w.writeCached(ctx, jobs, ts, st)
	}
	for attempt := 1; len(jobs) > 0; attempt++ {
		if attempt > maxCASAttempts {
			return fmt.Errorf("ingest: rollups: inputs of %d rows changed %d times while writing: %w", len(jobs), maxCASAttempts, storage.ErrConflict)
		}
		muts := make([]rollupMut, 0, len(jobs)*len(w.direct))
		for j := range jobs {
			job := &jobs[j]
			if job.derivedOnly {
				continue
			}
			if job.read {
				var err error
				if job.cells, err = w.foldStored(ctx, job.key, job.baseSec, st); err != nil {
					return err
				}
			}
			for k, i := range w.direct {
				iv := &w.cfg.Intervals[i]
				lo := job.baseSec * 1000
				m, err := w.cellsMut(ctx, i, job.key, iv.BaseTime(job.baseSec), lo, lo+rowkey.RowSpanMs, job.cells[k], job.read, ts)
				if err != nil {
					return err
				}
				muts = append(muts, m)
			}
		}
		if err := w.apply(ctx, muts, st); err != nil {
			return err
		}
		ders, err := w.derivedCells(ctx, jobs)
		if err != nil {
			return err
		}
		muts = muts[:0]
		for _, d := range ders {
			m, err := w.cellsMut(ctx, d.iv, d.rawKey, d.base, d.lo, d.hi, d.cells, true, ts)
			if err != nil {
				return err
			}
			muts = append(muts, m)
		}
		if err := w.apply(ctx, muts, st); err != nil {
			return err
		}
		if jobs, err = w.recheck(ctx, jobs, ders, st); err != nil {
			return err
		}
	}
	return nil
}

// foldStored reads raw row key and folds its points into each short
// interval's cells of its hour.
func (w *rollupWriter) foldStored(ctx context.Context, key []byte, baseSec int64, st *RollupStats) ([][]rollup.Cell, error) {
	st.SourceReads++
	cells, buf, err := w.opts.Table.GetAppend(ctx, w.getC[:0], w.getB[:0], key, &storage.ReadOptions{Families: []string{w.opts.Family}})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("ingest: rollups: read row %x: %w", key, err)
	}
	w.getC, w.getB = cells, buf
	pts, derr := w.dec.Decode(w.pts[:0], baseSec, cells)
	w.pts = pts
	if derr != nil {
		w.log.Warn("ingest: rollups: raw row has cells that do not decode; folding the rest", "row", fmt.Sprintf("%x", key), "err", derr)
	}
	out := make([][]rollup.Cell, len(w.direct))
	for k, i := range w.direct {
		iv := &w.cfg.Intervals[i]
		out[k] = rollup.Fold(nil, iv, iv.BaseTime(baseSec), pts)
	}
	return out, nil
}

// derived is one longer interval's cell computed for a batch.
type derived struct {
	iv, src int
	rawKey  []byte
	base    int64
	lo, hi  int64         // the cell's range, ms
	cells   []rollup.Cell // the cell (none when its source has none)
	from    []rollup.Cell // the source cells it was folded from
}

// derivedCells computes the longer intervals' cells holding the hours of
// jobs, once each, from their sources' stored cells.
func (w *rollupWriter) derivedCells(ctx context.Context, jobs []rollupJob) ([]derived, error) {
	var out []derived
	seen := map[string]bool{}
	for j := range jobs {
		for _, d := range w.derived {
			iv := &w.cfg.Intervals[d.iv]
			base, idx := iv.CellOf(jobs[j].baseSec * 1000)
			lo := iv.CellStart(base, idx)
			id := string(jobs[j].key) + fmt.Sprint(d.iv, lo)
			if seen[id] {
				continue
			}
			seen[id] = true
			dc := derived{iv: d.iv, src: d.src, rawKey: jobs[j].key, base: base, lo: lo, hi: lo + iv.Seconds*1000}
			var err error
			if dc.from, err = w.sourceCells(ctx, d.src, dc.rawKey, dc.lo, dc.hi); err != nil {
				return nil, err
			}
			dc.cells = rollup.FoldCells(nil, iv, base, dc.from)
			out = append(out, dc)
		}
	}
	return out, nil
}

// sourceCells reads the stored cells of interval src in [lo, hi) ms of
// the series of rawKey.
func (w *rollupWriter) sourceCells(ctx context.Context, src int, rawKey []byte, lo, hi int64) ([]rollup.Cell, error) {
	iv := &w.cfg.Intervals[src]
	var out []rollup.Cell
	key := append([]byte(nil), rawKey...)
	for base := iv.BaseTime(lo / 1000); base*1000 < hi; base = iv.NextBase(base) {
		rollup.SetBaseTime(w.opts.Layout, key, base)
		cells, err := w.tables[src].Get(ctx, key, &storage.ReadOptions{Families: []string{w.opts.Family}})
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("ingest: rollups: read %s row %x: %w", iv.Name, key, err)
		}
		var st RollupStats
		for _, c := range w.decodeRow(nil, iv, base, cells, &st) {
			if c.T >= lo && c.T < hi {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// recheck reads again what jobs and ders were computed from and returns
// the jobs to write again.
func (w *rollupWriter) recheck(ctx context.Context, jobs []rollupJob, ders []derived, st *RollupStats) ([]rollupJob, error) {
	var again []rollupJob
	for j := range jobs {
		job := jobs[j]
		if !job.read || job.derivedOnly {
			continue
		}
		now, err := w.foldStored(ctx, job.key, job.baseSec, st)
		if err != nil {
			return nil, err
		}
		for k := range w.direct {
			if !sameCells(now[k], job.cells[k]) {
				st.Conflicts++
				job.derivedOnly = false
				again = append(again, job)
				break
			}
		}
	}
	for _, d := range ders {
		from, err := w.sourceCells(ctx, d.src, d.rawKey, d.lo, d.hi)
		if err != nil {
			return nil, err
		}
		if !sameCells(from, d.from) {
			st.Conflicts++
			again = append(again, rollupJob{key: d.rawKey, baseSec: d.lo / 1000, derivedOnly: true})
		}
	}
	return again, nil
}

func sameCells(a, b []rollup.Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rollupMut is the writes to one rollup row.
type rollupMut struct {
	tbl storage.Table
	mut storage.Mutation
}

// cellsMut returns the mutation that makes the cells of interval i in
// [lo, hi) of the row at base of the series of rawKey exactly cells:
// each cell's columns put, and (clear) the columns of the range's other
// indexes deleted. OpenTSDB's format deletes every other width of each
// aggregator's column, so a value whose width changed leaves no stale
// column; columns of aggregators tsd does not compute are left alone.
// With other writers those deletes are blind (every version of every
// other width: a concurrent writer's column of another width must not
// survive the last write). A sole writer reads the row first and deletes
// only the other widths it finds (every version: an exact-version delete
// would bring back an older version the family no longer shows): Pebble
// makes an all-version delete a range tombstone, and those pile up in the
// memtable, each new iterator fragmenting them all, so with blind deletes
// (about 23 per cell) reads slowed with every rollup row written. A
// width rarely changes, so a sole writer writes few.
func (w *rollupWriter) cellsMut(ctx context.Context, i int, rawKey []byte, base, lo, hi int64, cells []rollup.Cell, clear bool, ts int64) (rollupMut, error) {
	iv, fam := &w.cfg.Intervals[i], w.opts.Family
	key := append([]byte(nil), rawKey...)
	rollup.SetBaseTime(w.opts.Layout, key, base)
	m := rollupMut{tbl: w.tables[i], mut: storage.Mutation{Row: key}}
	var present map[string]bool
	if w.opts.Format == schema.FormatOpenTSDB && w.sole {
		var err error
		if present, err = w.presentColumns(ctx, i, key); err != nil {
			return m, err
		}
	}
	i0 := iv.Index(base, lo/1000)
	i1 := iv.Index(base, (hi-1)/1000) + 1
	c := 0
	for idx := i0; idx < i1; idx++ {
		var cell *rollup.Cell
		if c < len(cells) && cells[c].T == iv.CellStart(base, idx) {
			cell = &cells[c]
			c++
		}
		if cell == nil && !clear {
			continue
		}
		if w.opts.Format == schema.FormatOpenTSDB {
			w.openTSDBCell(&m.mut, iv, base, idx, cell, ts, present)
			continue
		}
		q, _ := rollup.AppendCellQualifier(nil, idx)
		if cell == nil {
			m.mut.Deletes = append(m.mut.Deletes, storage.Deletion{Kind: storage.DeleteColumn, Family: fam, Qualifier: q})
			continue
		}
		m.mut.Cells = append(m.mut.Cells, storage.Cell{Family: fam, Qualifier: q, Timestamp: ts, Value: rollup.AppendCellValue(nil, cell)})
	}
	return m, nil
}

// presentColumns reads rollup row key of interval i and returns the set
// of its qualifiers. The map is reused by the next call.
func (w *rollupWriter) presentColumns(ctx context.Context, i int, key []byte) (map[string]bool, error) {
	cells, buf, err := w.tables[i].GetAppend(ctx, w.presC[:0], w.presB[:0], key, &storage.ReadOptions{Families: []string{w.opts.Family}})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("ingest: rollups: read %s row %x: %w", w.cfg.Intervals[i].Name, key, err)
	}
	w.presC, w.presB = cells, buf
	if w.present == nil {
		w.present = map[string]bool{}
	}
	clear(w.present)
	for _, c := range cells {
		w.present[string(c.Qualifier)] = true
	}
	return w.present, nil
}

// valueFlags are the widths OpenTSDB writes a value with.
var valueFlags = [...]rowkey.Flags{0, 1, 3, 7, rowkey.FlagFloat | 3, rowkey.FlagFloat | 7}

// openTSDBCell adds to m OpenTSDB's columns of one cell (nil: none), and
// deletes the other widths of each (every version): all of them when
// present is nil, else those present holds.
func (w *rollupWriter) openTSDBCell(m *storage.Mutation, iv *rollup.Interval, base int64, idx int, cell *rollup.Cell, ts int64, present map[string]bool) {
	fam := w.opts.Family
	for a := range rollup.NumAggs {
		id := w.ids[a]
		if id < 0 {
			continue
		}
		var q, v []byte
		if cell != nil {
			var err error
			if q, v, _, err = rollup.AppendColumn(nil, nil, &w.ids, a, iv, base, cell); err != nil {
				continue // cannot happen: the cell is one of the row's
			}
		}
		for _, f := range valueFlags {
			other, _ := rollup.AppendQualifier(nil, id, idx, f)
			if (q != nil && string(other) == string(q)) || (present != nil && !present[string(other)]) {
				continue
			}
			m.Deletes = append(m.Deletes, storage.Deletion{Kind: storage.DeleteColumn, Family: fam, Qualifier: other})
		}
		if q != nil {
			m.Cells = append(m.Cells, storage.Cell{Family: fam, Qualifier: q, Timestamp: ts, Value: v})
		}
	}
}

// apply writes the mutations and what pre holds (then cleared), in one
// commit where the engine writes several tables at once
// (storage.ApplyGroup), else one Apply per table.
func (w *rollupWriter) apply(ctx context.Context, muts []rollupMut, st *RollupStats) error {
	byTable := map[storage.Table][]storage.Mutation{}
	var order []storage.Table
	for _, m := range muts {
		if len(m.mut.Cells) == 0 && len(m.mut.Deletes) == 0 {
			continue
		}
		if _, ok := byTable[m.tbl]; !ok {
			order = append(order, m.tbl)
		}
		byTable[m.tbl] = append(byTable[m.tbl], m.mut)
		st.Rows++
		st.Cells += int64(len(m.mut.Cells))
	}
	groups := w.pre
	for _, t := range order {
		groups = append(groups, storage.TableMutations{Table: t, Muts: byTable[t]})
	}
	w.pre = groups[:0]
	if err := storage.ApplyGroup(ctx, groups); err != nil {
		return fmt.Errorf("ingest: rollups: %w", err)
	}
	clear(groups)
	return nil
}

func (w *rollupWriter) ours(id int) bool {
	for _, x := range w.ids {
		if x == id {
			return true
		}
	}
	return false
}

// decodeRow appends the cells of a stored rollup row, in any form tsd
// reads (rollup.RowReader: the rule queries read by too).
func (w *rollupWriter) decodeRow(dst []rollup.Cell, iv *rollup.Interval, base int64, cells []storage.Cell, st *RollupStats) []rollup.Cell {
	w.rrd.IDs = w.ids
	out, bad := w.rrd.Decode(dst, iv, base, cells)
	st.BadCells += int64(bad)
	return out
}
