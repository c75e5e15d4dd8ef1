package read

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

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
	entry *cacheEntry
	fp    uint64
}

// fetchArena holds one bucket's fetched cells.
type fetchArena struct {
	data  []byte
	cells []cellOffs
}

// view returns the row's points as rowReader.view does: the cache's when
// the scan found the row there, else decoded into dst[:0].
func (fr *fetchedRow) view(rr *rowReader, dst []series.Point, b *Budget) ([]series.Point, *cacheEntry, error) {
	rr.r.c.rows.Add(1)
	if e := fr.entry; e != nil {
		return e.pts, e, b.AddPoints(len(e.pts))
	}
	a := fr.arena
	rr.key = append(rr.key[:0], a.data[fr.key[0]:fr.key[1]]...) // named in corrupt-cell logs
	rr.cellBuf = appendArenaCells(rr.cellBuf[:0], a.data, a.cells[fr.cells[0]:fr.cells[1]])
	rr.cells = rr.cellBuf
	pts, _, err := rr.decodeMiss(dst[:0], fr.base/1000, fr.fp, b)
	return pts, nil, err
}

// fetchBucket is what one bucket's scan kept; it is the scan's sink.
type fetchBucket struct {
	fs    *fetchScan
	arena fetchArena
	rows  []seriesRow
	// With Selection.Notes, the annotations found, in scan order, and
	// their series (index in the selection).
	notes   []Note
	noteIDs []int32
	// While a scan records the hours it reads whole for the trust index
	// (fetchtrust.go): the hours it met and their rows' entries.
	recording  bool
	met        []metHour
	metEntries []*cacheEntry
}

type seriesRow struct {
	series int32 // index in the selection
	row    fetchedRow
}

// fetchScan scans every bucket of the metric over the range and returns
// the selected series' rows, per series in time order, in bufs' memory.
func (r *Reader) fetchScan(ctx context.Context, sel *Selection, bufs *fetchBuffers, maxBytes int64) ([][]fetchedRow, error) {
	bufs.ids = selectionIDs(bufs.ids, sel)
	if n := r.buckets(); len(bufs.buckets) != n {
		bufs.buckets = make([]fetchBucket, n)
	}
	fs := fetchScan{r: r, sel: sel, ids: bufs.ids, buckets: bufs.buckets, maxBytes: maxBytes}
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
	buckets  []fetchBucket
	bytes    atomic.Int64
	maxBytes int64 // past it the scan stops with errFetchFull
}

// run scans one bucket.
func (fs *fetchScan) run(ctx context.Context, rr *rowReader, bucket int) error {
	fb := &fs.buckets[bucket]
	fb.fs = fs
	if t := fs.trust(); t != nil {
		return fs.runTrusted(ctx, rr, bucket, t)
	}
	return fs.r.scanBucket(ctx, rr, bucket, fs.sel, fs.ids, fb)
}

// trust returns the trust index when the fetch may skip the hours it
// holds: not when the fetch gathers annotations, which are in the
// cells, nor before 1970 (the querier reads from 0 on), nor over a range
// of more than maxTrustedHours.
func (fs *fetchScan) trust() *trustIndex {
	c := fs.r.cache
	if c == nil || c.trust == nil || fs.sel.Notes || fs.sel.Start < 0 ||
		rowkey.BaseTime(fs.sel.End)-rowkey.BaseTime(fs.sel.Start) >= maxTrustedHours*rowkey.RowSpan {
		return nil
	}
	return c.trust
}

// cells copies a selected row's cells to the bucket's arena.
func (fb *fetchBucket) cells(rr *rowReader, id int32, baseSec int64, cells []rowkey.Cell, first, last bool) error {
	a := &fb.arena
	if first {
		k := len(a.data)
		a.data = append(a.data, rr.key...)
		fb.rows = append(fb.rows, seriesRow{series: id, row: fetchedRow{base: baseSec * 1000, arena: a,
			key: [2]int{k, len(a.data)}, cells: [2]int{len(a.cells), len(a.cells)}}})
	}
	n := len(a.data)
	for i := range cells {
		a.data, a.cells = appendCell(a.data, a.cells, &cells[i])
	}
	fr := &fb.rows[len(fb.rows)-1].row
	fr.cells[1] = len(a.cells)
	if fb.fs.bytes.Add(int64(len(a.data)-n)) > fb.fs.maxBytes {
		return errFetchFull
	}
	if last {
		fb.finish(rr, id, fr)
	}
	return nil
}

// finish ends a row: its annotations are kept with Selection.Notes, and
// with a row cache it is looked up, a hit giving its arena space back.
func (fb *fetchBucket) finish(rr *rowReader, id int32, fr *fetchedRow) {
	a := &fb.arena
	rr.cellBuf = appendArenaCells(rr.cellBuf[:0], a.data, a.cells[fr.cells[0]:fr.cells[1]])
	if fb.fs.sel.Notes {
		n := len(fb.notes)
		fb.notes = appendNotes(fb.notes, rr.cellBuf, fr.base)
		for range len(fb.notes) - n {
			fb.noteIDs = append(fb.noteIDs, id)
		}
	}
	c := fb.fs.r.cache
	if c == nil {
		return
	}
	fr.fp, fr.entry, rr.fpBuf = c.lookup(rr.fpBuf, a.data[fr.key[0]:fr.key[1]], rr.cellBuf)
	if fb.recording {
		fb.metRow(fr.base/1000, fr.entry)
	}
	if fr.entry == nil {
		return
	}
	fb.fs.bytes.Add(-int64(len(a.data) - fr.key[0]))
	a.data, a.cells = a.data[:fr.key[0]], a.cells[:fr.cells[0]]
	fr.key, fr.cells = [2]int{}, [2]int{}
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
		fb := &fs.buckets[b]
		for k, id := range fb.noteIDs {
			bufs.notes[id] = append(bufs.notes[id], fb.notes[k])
		}
	}
}
