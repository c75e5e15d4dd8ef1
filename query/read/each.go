package read

import (
	"context"
	"sync"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// eachTask is Read's per-series plan: workers take series in turn and Get
// their hour rows.
type eachTask struct {
	sel *Selection
	fn  Func
	mu  sync.Mutex // serialises fn when workers run
}

func (r *Reader) readEach(ctx context.Context, sel *Selection, fn Func) error {
	return r.forSeries(ctx, sel, &eachTask{sel: sel, fn: fn})
}

func (t *eachTask) run(ctx context.Context, rr *rowReader, i int) error {
	return rr.readSeries(ctx, t.sel, i, t.give)
}

func (t *eachTask) give(s index.Series, pts []series.Point, notes []Note) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fn(s, pts, notes)
}

// maxInlineGets is the most row Gets a per-series read does on the
// caller's goroutine: for a few rows, starting workers (and waking
// another thread for them) costs more than the reads, which are cache hits.
const maxInlineGets = 8

// inline reports whether the per-series plan reads sel without workers.
func (r *Reader) inline(sel *Selection) bool {
	if len(sel.Series) == 1 || r.opts.Parallelism == 1 {
		return true
	}
	hours := (rowkey.BaseTime(sel.End)-rowkey.BaseTime(sel.Start))/3600 + 1
	return int64(len(sel.Series))*hours <= maxInlineGets
}

// readSeries reads series i of sel and gives it to fn if it has points
// or notes.
func (rr *rowReader) readSeries(ctx context.Context, sel *Selection, i int, fn Func) error {
	s := &sel.Series[i]
	rr.want, rr.notes = sel.Notes, rr.notes[:0]
	pts, err := rr.seriesPoints(ctx, s, sel.Start, sel.End, sel.Budget)
	if err != nil {
		return err
	}
	if notes := clipNotes(rr.notes, sel.Start, sel.End); len(pts)+len(notes) > 0 {
		return fn(*s, pts, notes)
	}
	return nil
}

// spanOf returns the hours the index says s may have rows in.
func spanOf(s *index.Series) seriesSpan {
	return seriesSpan{first: s.First, last: s.Last, has: s.HasSpan}
}

// seriesPoints returns the points of s in [start, end] from the head and
// the store, as a new slice.
func (rr *rowReader) seriesPoints(ctx context.Context, s *index.Series, start, end int64, b *Budget) ([]series.Point, error) {
	tsuid := []byte(s.TSUID)
	if err := rr.loadHead(tsuid, start, end, b); err != nil {
		return nil, err
	}
	rr.store = rr.store[:0]
	sp := spanOf(s)
	first, last := hourRange(&sp, start, end)
	for h := first; h <= last; h += hourMs {
		var err error
		if rr.store, err = rr.getRow(ctx, rr.store, tsuid, h, b); err != nil {
			return nil, err
		}
	}
	store := clip(rr.store, start, end)
	if len(store)+len(rr.head) == 0 {
		return nil, nil // the caller may still have notes
	}
	return mergeHead(make([]series.Point, 0, len(store)+len(rr.head)), store, rr.head), nil
}
