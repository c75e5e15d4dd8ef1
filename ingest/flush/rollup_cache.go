package flush

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/storage"
)

// DefaultRollupCacheRows bounds the rollup rows a sole writer keeps in
// memory (RollupOptions.CacheRows). A row costs its key (about 70 bytes
// for a devops series), its cells (about 11 bytes each while the day is
// open, about 54 bytes for a packed day), the fold of an open row's cells
// into the longer interval's cell it alone makes (88 bytes: a day from its
// hours) and map overhead: at most about 600 bytes for a day of 1h cells,
// so at most about 40 MiB.
const DefaultRollupCacheRows = 65536

// rowCache holds, for a sole writer, the cells of recently written rollup
// rows of the intervals that fold raw points, exactly as stored: packed,
// with the indexes of any cell columns the row also holds (left by an
// older writer; the next write deletes them). A flush folds a row's new
// hour into it and writes the row whole without reading it. Bounded: a
// full cache drops an arbitrary row (Go's map order), read again from the
// store when next needed.
type rowCache struct {
	max int
	m   map[string]*cachedRow
}

type cachedRow struct {
	// id is the row's key in the cache (cacheID), kept so that a batch
	// rewriting the row needs no new one.
	id string
	// packed is the row's packed column when it has one (then it has no
	// cell column); else cells holds its cell columns' cells
	// (appendCacheCells) and stray their indexes.
	packed []byte
	cells  []byte
	stray  []strayCol
	// lastT is the start of the row's last cell (math.MinInt64 for
	// none), so an hour after it appends without parsing cells.
	lastT int64
	// fold holds, per derived interval (rollupWriter.derived) whose cell
	// is exactly this row's span, the fold of the row's cells (FoldCells;
	// Count 0 for none); nil when unknown. A batch that only appends
	// cells folds them into it, which gives the cell folding every cell
	// gives: FoldCells adds in time order and adding a cell into an
	// empty one copies it.
	fold []rollup.Cell
}

// strayCol is a cell column version a row holds: its index and, when
// this writer wrote it, its timestamp (µs), deleted then as that one
// version (a point tombstone, which a compaction drops; a range
// tombstone stays in the store's files); 0 for a column found in the
// store, whose versions are unknown (all are deleted).
type strayCol struct {
	idx uint16
	ts  int64
}

// appendCacheCells appends cells in the cache's form: per cell its index
// (uint16), the length of its cell value (1 byte) and the value.
func appendCacheCells(dst []byte, iv *rollup.Interval, base int64, cells []rollup.Cell) []byte {
	for i := range cells {
		idx := iv.Index(base, cells[i].T/1000)
		dst = append(dst, byte(idx>>8), byte(idx), 0)
		n := len(dst)
		dst = rollup.AppendCellValue(dst, &cells[i])
		dst[n-1] = byte(len(dst) - n)
	}
	return dst
}

// parseCacheCells appends the cells of appendCacheCells' form to dst.
func parseCacheCells(dst []rollup.Cell, iv *rollup.Interval, base int64, b []byte) ([]rollup.Cell, error) {
	// Room for every cell first: the row is parsed on each batch that
	// rewrites one of its hours.
	n := 0
	for r := b; len(r) >= 3 && len(r) >= 3+int(r[2]); r = r[3+int(r[2]):] {
		n++
	}
	dst = slices.Grow(dst, n)
	for len(b) > 0 {
		if len(b) < 3 || len(b) < 3+int(b[2]) {
			return dst, errors.New("truncated cached cells")
		}
		idx := int(b[0])<<8 | int(b[1])
		c, err := rollup.ParseCellValue(iv.CellStart(base, idx), b[3:3+int(b[2])])
		if err != nil {
			return dst, err
		}
		dst = append(dst, c)
		b = b[3+int(b[2]):]
	}
	return dst, nil
}

func newRowCache(max int) *rowCache {
	return &rowCache{max: max, m: make(map[string]*cachedRow)}
}

// put caches r under id, in place of the row cached there if any.
func (c *rowCache) put(id string, r cachedRow) {
	if c.max <= 0 {
		return
	}
	r.id = id
	if cur := c.m[id]; cur != nil {
		*cur = r
		return
	}
	if len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[id] = &r
}

// appendCacheID appends the name of rollup row key of interval i in the
// cache: i as one byte, then the key.
func appendCacheID(dst []byte, i int, key []byte) []byte {
	return append(append(dst, byte(i)), key...)
}

// batchRow is a rollup row of a short interval being rewritten by a batch.
type batchRow struct {
	id     string
	i      int
	key    []byte
	base   int64
	cells  []rollup.Cell
	stray  []strayCol // cell columns stored
	packed bool       // a packed column stored
	value  []byte     // the packed column written
	wrote  bool       // by this batch (else read for a longer interval only)
	// complete: the batch wrote the row's last interval; vanished: an
	// hour lost a cell; fresh: the cells the batch computed.
	complete, vanished bool
	fresh              []rollup.Cell
	// An open row from the cache is parsed only when needed: until then
	// raw holds its cells in the cache's form (the batch's appended
	// hours too) and cells is nil. lastT is the start of its last cell.
	// foldIn is the cached fold (cachedRow.fold), usable while appended
	// says every change of the batch was an append; fold is the one the
	// batch computed, cached with the row (nil: none).
	raw          []byte
	parsed       bool
	lastT        int64
	foldIn, fold []rollup.Cell
	appended     bool
}

// ensureCells parses br's cached cells if they are not yet.
func (w *rollupWriter) ensureCells(br *batchRow) error {
	if br.parsed {
		return nil
	}
	iv := &w.cfg.Intervals[br.i]
	cells, err := parseCacheCells(nil, iv, br.base, br.raw)
	if err != nil {
		return fmt.Errorf("ingest: rollups: cached %s row %x: %w", iv.Name, br.key, err)
	}
	br.cells, br.parsed, br.raw = cells, true, nil
	return nil
}

// lastStart returns the start of the last of cells, math.MinInt64 for none.
func lastStart(cells []rollup.Cell) int64 {
	if len(cells) == 0 {
		return math.MinInt64
	}
	return cells[len(cells)-1].T
}

// writeCached is writeJobs for a sole writer in the dense format: each
// short interval's row is taken from the cache (or read once), its hours
// replaced by the jobs' cells and written whole as one packed column, its
// cell columns deleted; each longer interval's cell is folded from those
// rows. One storage.ApplyGroup per batch (with the batch's raw columns,
// flush_write.go), no read after the write: with no other writer, what
// this writer wrote and read is what is stored. On an error the rows the
// batch touched leave the cache.
func (w *rollupWriter) writeCached(ctx context.Context, jobs []rollupJob, ts int64, st *RollupStats) (err error) {
	if w.batch == nil {
		w.batch = map[string]*batchRow{}
	}
	batch, order := w.batch, w.order[:0]
	w.keys, w.cellArena, w.cellSlab = w.keys[:0], w.cellArena[:0], w.cellSlab[:0]
	defer func() {
		if err != nil {
			for _, br := range order {
				delete(w.cache.m, br.id)
			}
		}
		clear(batch)
		clear(order)
		w.order = order[:0]
	}()
	for j := range jobs {
		job := &jobs[j]
		if job.read {
			if job.cells, err = w.foldStored(ctx, job.key, job.baseSec, st); err != nil {
				return err
			}
		}
		for k, i := range w.direct {
			iv := &w.cfg.Intervals[i]
			br, err := w.batchRow(ctx, batch, &order, i, job.key, iv.BaseTime(job.baseSec), st)
			if err != nil {
				return err
			}
			lo := job.baseSec * 1000
			hi := lo + int64(rollupHourMs)
			if !br.parsed && lo > br.lastT {
				// The hour follows every cell of the row: append, no
				// parse, nothing replaced.
				br.raw = appendCacheCells(br.raw, iv, br.base, job.cells[k])
				if c := job.cells[k]; len(c) > 0 {
					br.lastT = c[len(c)-1].T
				}
			} else {
				if err := w.ensureCells(br); err != nil {
					return err
				}
				var gone bool
				br.cells, gone = replaceCells(br.cells, lo, hi, job.cells[k])
				br.vanished = br.vanished || gone
				br.appended, br.lastT = false, lastStart(br.cells)
			}
			br.complete = br.complete || hi >= iv.NextBase(br.base)*1000
			br.fresh = append(br.fresh, job.cells[k]...)
		}
	}
	muts := make([]rollupMut, 0, len(order))
	for _, br := range order {
		m, err := w.rowMut(br, ts)
		if err != nil {
			return err
		}
		muts = append(muts, m)
	}
	// The longer cells fold the batch's rows in memory, so they go in
	// the same commit, unless one folds a longer interval read from the
	// store.
	if !w.derivedFromDirect() {
		if err := w.apply(ctx, muts, st); err != nil {
			return err
		}
		muts = muts[:0]
	}
	dmuts, err := w.derivedCached(ctx, jobs, batch, &order, ts, st)
	if err != nil {
		return err
	}
	if err := w.apply(ctx, append(muts, dmuts...), st); err != nil {
		return err
	}
	for _, br := range order {
		if !br.wrote {
			continue
		}
		if br.packed {
			w.cache.put(br.id, cachedRow{packed: br.value})
			continue
		}
		raw := br.raw
		if br.parsed {
			raw = appendCacheCells(nil, &w.cfg.Intervals[br.i], br.base, br.cells)
		}
		w.cache.put(br.id, cachedRow{cells: raw, stray: br.stray, lastT: br.lastT, fold: br.fold})
	}
	return nil
}

const rollupHourMs = 3600 * 1000

// batchRow returns the batch's row of interval i holding base for the
// series of rawKey, from the batch, the cache or the store.
func (w *rollupWriter) batchRow(ctx context.Context, batch map[string]*batchRow, order *[]*batchRow, i int, rawKey []byte, base int64, st *RollupStats) (*batchRow, error) {
	w.idBuf = appendCacheID(w.idBuf[:0], i, rawKey)
	rollup.SetBaseTime(w.opts.Layout, w.idBuf[1:], base)
	if br := batch[string(w.idBuf)]; br != nil {
		return br, nil
	}
	cr := w.cache.m[string(w.idBuf)]
	var id string
	if cr != nil {
		id = cr.id
	} else {
		id = string(w.idBuf)
	}
	// The key lives in w.keys until the batch is written.
	n := len(w.keys)
	w.keys = append(w.keys, w.idBuf[1:]...)
	key := w.keys[n:len(w.keys):len(w.keys)]
	br := &batchRow{id: id, i: i, key: key, base: base, parsed: true}
	iv := &w.cfg.Intervals[i]
	if cr != nil {
		if cr.packed != nil {
			var err error
			if br.cells, err = w.rdec.Decode(nil, iv, base, cr.packed); err != nil {
				return nil, fmt.Errorf("ingest: rollups: cached %s row %x: %w", iv.Name, key, err)
			}
			br.packed, br.lastT = true, lastStart(br.cells)
		} else {
			// Appending to raw leaves the cached slice's bytes as they are.
			br.raw, br.parsed, br.lastT = cr.cells, false, cr.lastT
			br.foldIn, br.appended = cr.fold, cr.fold != nil
		}
		br.stray = cr.stray
	} else {
		cells, err := w.tables[i].Get(ctx, key, &storage.ReadOptions{Families: []string{w.opts.Family}})
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("ingest: rollups: read %s row %x: %w", iv.Name, key, err)
		}
		br.cells = w.decodeRow(nil, iv, base, cells, st)
		br.lastT = lastStart(br.cells)
		for _, c := range cells {
			if idx, ok := rollup.ParseCellQualifier(c.Qualifier); ok {
				br.stray = append(br.stray, strayCol{idx: uint16(idx)})
			} else if string(c.Qualifier) == rollup.PackedQualifier {
				br.packed = true
			}
		}
	}
	batch[id] = br
	*order = append(*order, br)
	return br, nil
}

// replaceCells returns cells (sorted by T) with those in [lo, hi)
// replaced by with, and whether a replaced cell has no successor.
func replaceCells(cells []rollup.Cell, lo, hi int64, with []rollup.Cell) ([]rollup.Cell, bool) {
	a := 0
	for a < len(cells) && cells[a].T < lo {
		a++
	}
	b := a
	for b < len(cells) && cells[b].T < hi {
		b++
	}
	gone := false
	for _, c := range cells[a:b] {
		if !hasCellAt(with, c.T) {
			gone = true
		}
	}
	out := make([]rollup.Cell, 0, a+len(with)+len(cells)-b)
	out = append(out, cells[:a]...)
	out = append(out, with...)
	return append(out, cells[b:]...), gone
}

func hasCellAt(cells []rollup.Cell, t int64) bool {
	for i := range cells {
		if cells[i].T == t {
			return true
		}
	}
	return false
}

// rowMut returns the mutation writing br: while the row is open (its
// last interval not yet written, no packed column, no cell lost) the
// batch's cells as cell columns; else the row whole as one packed column
// (or none when it has no cells) with its cell columns deleted. So a day
// costs one packed encode, at its end, and a row is cell columns or one
// packed column, never both.
func (w *rollupWriter) rowMut(br *batchRow, ts int64) (rollupMut, error) {
	iv, fam := &w.cfg.Intervals[br.i], w.opts.Family
	m := rollupMut{tbl: w.tables[br.i], mut: storage.Mutation{Row: br.key}}
	br.wrote = true
	if !br.packed && !br.complete && !br.vanished {
		// Qualifiers, values and the cell list live in the batch's
		// arenas until the batch is written.
		n := len(w.cellSlab)
		for i := range br.fresh {
			c := &br.fresh[i]
			idx := iv.Index(br.base, c.T/1000)
			a := len(w.cellArena)
			w.cellArena, _ = rollup.AppendCellQualifier(w.cellArena, idx)
			b := len(w.cellArena)
			w.cellArena = rollup.AppendCellValue(w.cellArena, c)
			e := len(w.cellArena)
			w.cellSlab = append(w.cellSlab, storage.Cell{Family: fam, Qualifier: w.cellArena[a:b:b], Timestamp: ts, Value: w.cellArena[b:e:e]})
			if sc := (strayCol{uint16(idx), ts}); !slices.Contains(br.stray, sc) {
				br.stray = append(br.stray, sc)
			}
		}
		m.mut.Cells = w.cellSlab[n:len(w.cellSlab):len(w.cellSlab)]
		return m, nil
	}
	if err := w.ensureCells(br); err != nil {
		return m, err
	}
	br.appended = false
	for _, sc := range br.stray {
		q, _ := rollup.AppendCellQualifier(nil, int(sc.idx))
		d := storage.Deletion{Kind: storage.DeleteColumn, Family: fam, Qualifier: q}
		if sc.ts > 0 {
			d.MinTime = sc.ts - sc.ts%1000
			d.MaxTime = d.MinTime + 1000
		}
		m.mut.Deletes = append(m.mut.Deletes, d)
	}
	br.stray, br.packed, br.value = nil, true, nil
	if len(br.cells) == 0 {
		m.mut.Deletes = append(m.mut.Deletes, storage.Deletion{Kind: storage.DeleteColumn, Family: fam, Qualifier: []byte(rollup.PackedQualifier)})
		br.packed = false
		return m, nil
	}
	v, err := w.renc.Append(nil, iv, br.base, br.cells)
	if err != nil {
		return m, fmt.Errorf("ingest: rollups: %s row %x: %w", iv.Name, br.key, err)
	}
	br.value = v
	m.mut.Cells = append(m.mut.Cells, storage.Cell{Family: fam, Qualifier: []byte(rollup.PackedQualifier), Timestamp: ts, Value: v})
	return m, nil
}

// derivedCached returns the mutations of the longer intervals' cells
// holding the jobs' hours, each folded once from its source's cells: the
// batch's rows (or cached, or read) for a short source, the store for a
// source that is itself longer (written by the Apply before); a cell
// every job of it leaves to a later flush (rollupJob.open) is skipped.
func (w *rollupWriter) derivedCached(ctx context.Context, jobs []rollupJob, batch map[string]*batchRow, order *[]*batchRow, ts int64, st *RollupStats) ([]rollupMut, error) {
	type cellID struct {
		iv  int
		key string
		lo  int64
	}
	seen := map[cellID]bool{}
	var muts []rollupMut
	for j := range jobs {
		for k, d := range w.derived {
			if k < 64 && jobs[j].open&(1<<k) != 0 {
				continue // left to the flush of the range's last head row
			}
			iv := &w.cfg.Intervals[d.iv]
			base, idx := iv.CellOf(jobs[j].baseSec * 1000)
			lo := iv.CellStart(base, idx)
			hi := lo + iv.Seconds*1000
			id := cellID{d.iv, string(w.seriesKey(jobs[j].key)), lo}
			if seen[id] {
				continue
			}
			seen[id] = true
			from := w.from[:0]
			var whole *batchRow // the one source row the cell is made of
			if w.isDirect(d.src) {
				src := &w.cfg.Intervals[d.src]
				if sb := src.BaseTime(lo / 1000); sb*1000 == lo && src.NextBase(sb)*1000 == hi {
					br, err := w.batchRow(ctx, batch, order, d.src, jobs[j].key, sb, st)
					if err != nil {
						return nil, err
					}
					whole = br
				}
				for sb := src.BaseTime(lo / 1000); whole == nil && sb*1000 < hi; sb = src.NextBase(sb) {
					br, err := w.batchRow(ctx, batch, order, d.src, jobs[j].key, sb, st)
					if err != nil {
						return nil, err
					}
					if err := w.ensureCells(br); err != nil {
						return nil, err
					}
					for _, c := range br.cells {
						if c.T >= lo && c.T < hi {
							from = append(from, c)
						}
					}
				}
			} else {
				var err error
				if from, err = w.sourceCells(ctx, d.src, jobs[j].key, lo, hi); err != nil {
					return nil, err
				}
			}
			if whole != nil {
				var err error
				if from, err = w.wholeRowCells(from, whole, k); err != nil {
					return nil, err
				}
			}
			w.from = from
			w.derivedC = rollup.FoldCells(w.derivedC[:0], iv, base, from)
			if whole != nil {
				whole.setFold(k, len(w.derived), w.derivedC)
			}
			m, err := w.cellsMut(ctx, d.iv, jobs[j].key, base, lo, hi, w.derivedC, true, ts)
			if err != nil {
				return nil, err
			}
			muts = append(muts, m)
		}
	}
	return muts, nil
}

// wholeRowCells appends to dst what the cell of derived interval k made
// of br alone folds from: the cached fold of the row and the cells the
// batch appended, when the batch only appended; else the row's cells.
func (w *rollupWriter) wholeRowCells(dst []rollup.Cell, br *batchRow, k int) ([]rollup.Cell, error) {
	if br.appended && k < len(br.foldIn) {
		w.foldAppends++
		dst = append(dst, br.foldIn[k])
		return append(dst, br.fresh...), nil
	}
	if err := w.ensureCells(br); err != nil {
		return dst, err
	}
	return append(dst, br.cells...), nil
}

// setFold records cell (none or one) as br's fold for derived interval k
// of n, to be cached with the row.
func (br *batchRow) setFold(k, n int, cell []rollup.Cell) {
	if len(br.fold) != n {
		br.fold = make([]rollup.Cell, n)
	}
	br.fold[k] = rollup.Cell{}
	if len(cell) > 0 {
		br.fold[k] = cell[0]
	}
}

// seriesKey is rawKey with its time zeroed: the same for every row of a
// series.
func (w *rollupWriter) seriesKey(rawKey []byte) []byte {
	k := append(w.skey[:0], rawKey...)
	rollup.SetBaseTime(w.opts.Layout, k, 0)
	w.skey = k
	return k
}

func (w *rollupWriter) isDirect(i int) bool {
	for _, d := range w.direct {
		if d == i {
			return true
		}
	}
	return false
}
