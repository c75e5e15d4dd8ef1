package read

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
)

// Fetched is a selection ready for lazy iteration. With the scan plan it
// holds the selected series' stored rows, still encoded, read by one scan
// per salt bucket; with the per-series plan it holds nothing and each
// iterator Gets its rows as it goes. It is safe for concurrent use.
type Fetched struct {
	r          *Reader
	maxBytes   int64 // Selection.MaxFetchBytes or Options.MaxFetchBytes
	series     []index.Series
	rows       [][]fetchedRow // per series; nil with the per-series plan
	bufs       *fetchBuffers  // rows' memory, with the scan plan
	start, end int64
	budget     *Budget
	notes      bool // Selection.Notes: iterators gather annotations
}

// fetchBuffers is one scan's memory, pooled by the Reader.
type fetchBuffers struct {
	ids     map[string]int32 // TSUID -> index in the selection
	buckets []fetchBucket
	counts  []int
	flat    []fetchedRow
	lists   [][]fetchedRow
	// The series' head rows, read before the scan: series i's are
	// hrows[hoffs[i]:hoffs[i+1]], their decoded copies in hslab.
	hrows []headRow
	hoffs []int
	hslab []series.Point
	// With Selection.Notes, series i's annotations (cloned) in notes[i].
	notes [][]Note
}

// maxPooledFetch is the largest scan memory Release keeps for reuse.
const maxPooledFetch = 8 << 20

// Release gives the fetched rows' memory back to the Reader: neither f
// nor its iterators may be used afterwards. It is optional.
func (f *Fetched) Release() {
	fb := f.bufs
	if fb == nil {
		return
	}
	f.bufs, f.rows = nil, nil
	clear(fb.hrows) // drop cache entries
	fb.hrows, fb.hoffs = fb.hrows[:0], fb.hoffs[:0]
	size := cap(fb.hslab) * pointBytes
	fb.hslab = fb.hslab[:0]
	for i := range fb.buckets {
		b := &fb.buckets[i]
		size += cap(b.arena.data)
		clear(b.notes)
		b.arena.data, b.arena.cells, b.rows, b.notes = b.arena.data[:0], b.arena.cells[:0], b.rows[:0], b.notes[:0]
	}
	if size > maxPooledFetch {
		return
	}
	clear(fb.ids)
	clear(fb.lists)
	clear(fb.notes)
	fb.flat, fb.notes = fb.flat[:0], fb.notes[:0]
	f.r.fetches.Put(fb)
}

// Fetch prepares lazy iterators over sel's series (Series, Start, End,
// MetricSeries, Plan, Budget, Notes and MaxFetchBytes; the series are not
// charged to the budget: the caller does). With Notes, each iterator also
// gathers its series' annotations (SeriesIterator.Notes). The planner
// chooses as in Read; the scan plan runs now and keeps the selected rows'
// cells, at most Selection.MaxFetchBytes (else Options.MaxFetchBytes) of
// them, beyond which Fetch drops them and falls back to Gets. Points are
// charged to the budget as iterators decode them.
func (r *Reader) Fetch(ctx context.Context, sel Selection) (*Fetched, error) {
	f := &Fetched{r: r, series: sel.Series, start: sel.Start, end: sel.End, budget: sel.Budget, notes: sel.Notes,
		maxBytes: r.opts.MaxFetchBytes}
	if sel.MaxFetchBytes > 0 && r.opts.MaxFetchBytes >= 0 {
		f.maxBytes = sel.MaxFetchBytes
	}
	if len(sel.Series) == 0 {
		return f, nil
	}
	start, err := r.clampStart(ctx, sel.Series[0].TSUID, sel.Start)
	if err != nil {
		return nil, err
	}
	f.start, sel.Start = start, start
	if start > sel.End || r.opts.MaxFetchBytes < 0 || r.choose(sel) != PlanScan {
		r.c.plansSeries.Add(1)
		return f, nil
	}
	f.bufs = r.fetches.Get().(*fetchBuffers)
	// The head before the store: a row leaves the head only once the store
	// has it, so no point falls between the two reads.
	if err := f.readHeads(ctx, &sel); err != nil {
		f.Release()
		if !errors.Is(err, errFetchFull) {
			return nil, err
		}
		r.c.plansSeries.Add(1)
		return f, nil
	}
	rows, err := r.fetchScan(ctx, sel, f.bufs, f.maxBytes)
	if err != nil {
		f.Release()
		if !errors.Is(err, errFetchFull) {
			return nil, err
		}
		r.c.plansSeries.Add(1)
		return f, nil
	}
	r.c.plansScan.Add(1)
	f.rows = rows
	return f, nil
}

// Len returns the number of series.
func (f *Fetched) Len() int { return len(f.series) }

// Iterator returns series i's points in the selection's range as a lazy
// iterator, as Reader.Iterator does; every call starts a new walk. A
// non-nil reuse, an iterator the caller is done with, is reset and
// returned with its buffers. The iterator must not outlive ctx.
func (f *Fetched) Iterator(ctx context.Context, i int, reuse *SeriesIterator) *SeriesIterator {
	rows := iterRows{notes: f.notes}
	if f.rows != nil {
		fb := f.bufs
		rows = iterRows{rows: f.rows[i], fetched: true, head: fb.hrows[fb.hoffs[i]:fb.hoffs[i+1]], hslab: fb.hslab, headRead: true}
		if f.notes && i < len(fb.notes) {
			rows.fetchedNotes = fb.notes[i]
		}
	}
	return f.r.newIterator(ctx, &f.series[i], rows, f.start, f.end, f.budget, nil, reuse)
}

// readHeads reads every selected series' head rows into f.bufs. Their
// decoded copies count against the fetch's bound (Selection.MaxFetchBytes
// or Options.MaxFetchBytes) as the scan's cells
// do: past it, the points are refunded to the budget and errFetchFull
// sends the selection to the per-series plan, whose iterators read the
// head one series at a time.
func (f *Fetched) readHeads(ctx context.Context, sel *Selection) error {
	fb := f.bufs
	var (
		charged int
		err     error
	)
	fb.hrows, fb.hslab, fb.hoffs, charged, err = f.r.readHeadRows(ctx, sel, fb.hrows[:0], fb.hslab[:0], fb.hoffs)
	if err != nil {
		return err
	}
	if int64(len(fb.hslab))*pointBytes > f.maxBytes {
		_ = sel.Budget.AddPoints(-charged)
		return errFetchFull
	}
	return nil
}

// errFetchFull stops a fetch scan past its bound.
var errFetchFull = errors.New("read: fetch buffer full")

// fetchedRow is one stored row of a fetched series: its key and cells in
// the arena of the bucket that held it.
type fetchedRow struct {
	base  int64 // ms
	arena *fetchArena
	key   [2]int // the row key: arena.data[key[0]:key[1]]
	cells [2]int // arena.cells[cells[0]:cells[1]]
	// With a row cache the scan looks each row up as it ends: entry is
	// the cache's on a hit (the cells are then dropped from the arena),
	// fp the fingerprint a miss is decoded and offered under.
	entry  *cacheEntry
	fp     uint64
	looked bool
}

// fetchArena holds one bucket's fetched cells.
type fetchArena struct {
	data  []byte
	cells []cellOffs
}

// load puts the row's key and cells in rr.key and rr.cells.
func (fr *fetchedRow) load(rr *rowReader) {
	a := fr.arena
	rr.key = append(rr.key[:0], a.data[fr.key[0]:fr.key[1]]...) // named in corrupt-cell logs
	rr.cells = appendArenaCells(rr.cells[:0], a.data, a.cells[fr.cells[0]:fr.cells[1]])
}

// fetchBucket is what one bucket's scan found.
type fetchBucket struct {
	arena fetchArena
	rows  []seriesRow
	notes []seriesNote // with Selection.Notes, in scan order
}

// seriesNote is an annotation a bucket's scan found.
type seriesNote struct {
	series int32 // index in the selection
	note   Note
}

type seriesRow struct {
	series int32 // index in the selection
	row    fetchedRow
}

// fetchScan scans every bucket of the metric over the range and returns
// the selected series' rows, per series in time order, in bufs' memory.
func (r *Reader) fetchScan(ctx context.Context, sel Selection, bufs *fetchBuffers, maxBytes int64) ([][]fetchedRow, error) {
	if bufs.ids == nil {
		bufs.ids = make(map[string]int32, len(sel.Series))
	}
	for i := range sel.Series {
		bufs.ids[sel.Series[i].TSUID] = int32(i)
	}
	if n := r.buckets(); len(bufs.buckets) != n {
		bufs.buckets = make([]fetchBucket, n)
	}
	fs := fetchScan{r: r, sel: &sel, ids: bufs.ids, buckets: bufs.buckets, maxBytes: maxBytes,
		metric: []byte(sel.Series[0].TSUID[:r.opts.Layout.Widths.Metric])}
	if err := r.forBuckets(ctx, &fs); err != nil {
		return nil, err
	}
	return fs.distribute(bufs), nil
}

// fetchScan is one fetch's shared state; each bucket writes its own
// fetchBucket.
type fetchScan struct {
	r        *Reader
	sel      *Selection
	ids      map[string]int32
	metric   []byte
	buckets  []fetchBucket
	bytes    atomic.Int64
	maxBytes int64 // past it the scan stops with errFetchFull
}

// run scans one bucket.
func (fs *fetchScan) run(ctx context.Context, _ *rowReader, bucket int) error {
	r, l := fs.r, &fs.r.opts.Layout
	start := l.AppendKeyPrefix(nil, bucket, fs.metric, fs.sel.Start)
	stop := r.stopKey(bucket, fs.metric, fs.sel.End)
	r.c.scans.Add(1)
	sc := r.opts.Data.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop,
		ReadOptions: storage.ReadOptions{Families: r.families}})
	defer sc.Close()
	fb := &fs.buckets[bucket]
	rs := rawScan{fs: fs, fb: fb, prefix: l.Salt.Width() + len(fs.metric), cur: -1}
	rs.tsuid = append(rs.tsuid, fs.metric...)
	for sc.Next() {
		if err := rs.add(sc.Cell()); err != nil {
			return err
		}
	}
	rs.finish()
	return sc.Err()
}

// rawScan groups one bucket's cells into rows and keeps selected ones.
type rawScan struct {
	fs     *fetchScan
	fb     *fetchBucket
	prefix int // salt + metric width: where the base time starts
	tsuid  []byte
	row    []byte // the current row's key
	have   bool
	cur    int // index in fb.rows of the current row; -1: not selected
	cells  []rowkey.Cell
	fpBuf  []byte
}

// add takes the scanner's next cell.
func (rs *rawScan) add(c storage.Cell) error {
	if !rs.have || !bytes.Equal(c.Row, rs.row) {
		rs.start(c.Row)
	}
	if rs.cur < 0 {
		return nil
	}
	a := &rs.fb.arena
	n := len(a.data)
	a.data, a.cells = appendCell(a.data, a.cells, &c)
	rs.fb.rows[rs.cur].row.cells[1] = len(a.cells)
	if rs.fs.bytes.Add(int64(len(a.data)-n)) > rs.fs.maxBytes {
		return errFetchFull
	}
	return nil
}

// finish ends the current row: its annotations are kept with
// Selection.Notes, and with a row cache it is looked up, a hit giving
// its arena space back.
func (rs *rawScan) finish() {
	if rs.cur < 0 {
		return
	}
	a, fr := &rs.fb.arena, &rs.fb.rows[rs.cur].row
	rs.cells = appendArenaCells(rs.cells[:0], a.data, a.cells[fr.cells[0]:fr.cells[1]])
	if rs.fs.sel.Notes {
		rs.keepNotes(fr.base)
	}
	c := rs.fs.r.cache
	if c == nil {
		return
	}
	key := a.data[fr.key[0]:fr.key[1]]
	fr.fp, rs.fpBuf = c.fingerprint(rs.fpBuf, key, rs.cells)
	fr.looked = true
	if fr.entry = c.entry(fr.fp, key, len(rs.cells)); fr.entry == nil {
		return
	}
	rs.fs.bytes.Add(-int64(len(a.data) - fr.key[0]))
	a.data, a.cells = a.data[:fr.key[0]], a.cells[:fr.cells[0]]
	fr.key, fr.cells = [2]int{}, [2]int{}
}

// keepNotes adds the annotation cells of the row in rs.cells, base ms,
// to its series' notes.
func (rs *rawScan) keepNotes(base int64) {
	id := rs.fb.rows[rs.cur].series
	for i := range rs.cells {
		c := &rs.cells[i]
		if rowkey.Classify(c.Qualifier) != rowkey.ColumnAnnotation {
			continue
		}
		off, err := rowkey.ParseAnnotationQualifier(c.Qualifier)
		if err != nil {
			continue
		}
		rs.fb.notes = append(rs.fb.notes, seriesNote{series: id, note: Note{T: base + off, Value: bytes.Clone(c.Value)}})
	}
}

// start begins a row, selected when its TSUID is.
func (rs *rawScan) start(row []byte) {
	rs.finish()
	rs.row, rs.have, rs.cur = append(rs.row[:0], row...), true, -1
	if len(row) < rs.prefix+rowkey.TimestampBytes {
		return
	}
	rs.tsuid = append(rs.tsuid[:len(rs.fs.metric)], row[rs.prefix+rowkey.TimestampBytes:]...)
	id, ok := rs.fs.ids[string(rs.tsuid)]
	if !ok {
		return
	}
	a := &rs.fb.arena
	k := len(a.data)
	a.data = append(a.data, row...)
	base := int64(binary.BigEndian.Uint32(row[rs.prefix:])) * 1000
	rs.fb.rows = append(rs.fb.rows, seriesRow{series: id, row: fetchedRow{base: base, arena: a,
		key: [2]int{k, len(a.data)}, cells: [2]int{len(a.cells), len(a.cells)}}})
	rs.cur = len(rs.fb.rows) - 1
}

// distribute lists each series' rows; a series lives in one bucket, whose
// scan met its rows in time order.
func (fs *fetchScan) distribute(bufs *fetchBuffers) [][]fetchedRow {
	n := len(fs.sel.Series)
	counts := append(bufs.counts[:0], make([]int, n)...)
	total := 0
	for b := range fs.buckets {
		for _, sr := range fs.buckets[b].rows {
			counts[sr.series]++
		}
		total += len(fs.buckets[b].rows)
	}
	flat := slices.Grow(bufs.flat[:0], total)[:total]
	out := slices.Grow(bufs.lists[:0], n)[:n]
	off := 0
	for i, c := range counts {
		out[i] = flat[off : off : off+c]
		off += c
	}
	for b := range fs.buckets {
		for _, sr := range fs.buckets[b].rows {
			out[sr.series] = append(out[sr.series], sr.row)
		}
	}
	bufs.counts, bufs.flat, bufs.lists = counts, flat, out
	if fs.sel.Notes {
		fs.distributeNotes(bufs)
	}
	return out
}

// distributeNotes lists each series' notes in time order: a series lives
// in one bucket, whose scan met its rows in time order.
func (fs *fetchScan) distributeNotes(bufs *fetchBuffers) {
	bufs.notes = slices.Grow(bufs.notes[:0], len(fs.sel.Series))[:len(fs.sel.Series)]
	clear(bufs.notes)
	for b := range fs.buckets {
		for _, sn := range fs.buckets[b].notes {
			bufs.notes[sn.series] = append(bufs.notes[sn.series], sn.note)
		}
	}
}
