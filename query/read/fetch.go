package read

import (
	"context"
	"errors"

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
	// hrows[hoffs[i]:hoffs[i+1]], their copies in hbufs.
	hrows []headRow
	hoffs []int
	hbufs headBufs
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
	size := cap(fb.hbufs.pts)*pointBytes + cap(fb.hbufs.snaps)
	fb.hbufs.reset()
	for i := range fb.buckets {
		b := &fb.buckets[i]
		b.fs = nil
		size += cap(b.arena.data) + 8*cap(b.metEntries)
		clear(b.notes)
		b.arena.data, b.arena.cells, b.rows, b.notes, b.noteIDs = b.arena.data[:0], b.arena.cells[:0], b.rows[:0], b.notes[:0], b.noteIDs[:0]
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
	if start <= sel.End && r.opts.MaxFetchBytes >= 0 && r.choose(sel) == PlanScan {
		if err := f.scan(ctx, &sel); err != nil {
			return nil, err
		}
	}
	if f.rows != nil {
		r.countPlan(PlanScan)
	} else {
		r.countPlan(PlanSeries)
	}
	return f, nil
}

// scan runs the scan plan: the head's rows of the selection, then every
// bucket's selected rows, kept in f.bufs. Past the fetch's bound it gives
// them back and leaves f to the per-series plan.
func (f *Fetched) scan(ctx context.Context, sel *Selection) error {
	f.bufs = f.r.fetches.Get().(*fetchBuffers)
	// The head before the store: a row leaves the head only once the store
	// has it, so no point falls between the two reads.
	err := f.readHeads(ctx, sel)
	if err == nil {
		f.rows, err = f.r.fetchScan(ctx, sel, f.bufs, f.maxBytes)
	}
	if err != nil {
		f.Release()
		if !errors.Is(err, errFetchFull) {
			return err
		}
	}
	return nil
}

// Len returns the number of series.
func (f *Fetched) Len() int { return len(f.series) }

// Iterator returns series i's points in the selection's range as a lazy
// iterator, as Reader.Iterator does; every call starts a new walk. A
// non-nil reuse, an iterator the caller is done with, is reset and
// returned with its buffers. The iterator must not outlive ctx.
func (f *Fetched) Iterator(ctx context.Context, i int, reuse *SeriesIterator) *SeriesIterator {
	from := iterFrom{notes: f.notes}
	if f.rows != nil {
		fb := f.bufs
		from = iterFrom{fetched: true, rows: f.rows[i], head: headRows{rows: fb.hrows[fb.hoffs[i]:fb.hoffs[i+1]], bufs: fb.hbufs}}
		if f.notes && i < len(fb.notes) {
			from.fetchedNotes = fb.notes[i]
		}
	}
	return f.r.newIterator(ctx, &f.series[i], from, f.start, f.end, f.budget, nil, reuse)
}

// readHeads reads every selected series' head rows into f.bufs. Their
// copies count against the fetch's bound (Selection.MaxFetchBytes or
// Options.MaxFetchBytes) as the scan's cells do, a snapshot at its
// decoded size, as a decoded copy (so a lazy stream that holds its fetch
// while a slow client reads keeps what it kept before snapshots): past
// it, the points are refunded to the budget and errFetchFull sends the
// selection to the per-series plan, whose iterators read the head one
// series at a time.
func (f *Fetched) readHeads(ctx context.Context, sel *Selection) error {
	fb := f.bufs
	var (
		charged int
		err     error
	)
	fb.hbufs.reset()
	fb.hrows, fb.hoffs, charged, err = f.r.readHeadRows(ctx, sel, fb.hrows[:0], &fb.hbufs, fb.hoffs)
	if err != nil {
		return err
	}
	copies := len(fb.hbufs.pts)
	for i := range fb.hrows {
		if fb.hrows[i].snap {
			copies += fb.hrows[i].n
		}
	}
	if int64(copies)*pointBytes > f.maxBytes {
		_ = sel.Budget.AddPoints(-charged)
		return errFetchFull
	}
	return nil
}
