package read

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/uid/index"
)

// readEach is the per-series plan: workers take series in turn and Get
// their hour rows.
func (r *Reader) readEach(ctx context.Context, sel Selection, fn Func) error {
	if r.inline(&sel) {
		rr := r.getRowReader()
		defer r.putRowReader(rr)
		for i := range sel.Series {
			if err := rr.readSeries(ctx, &sel, i, fn); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	locked := func(s index.Series, pts []series.Point, notes []Note) error {
		mu.Lock()
		defer mu.Unlock()
		return fn(s, pts, notes)
	}
	work := func() {
		defer wg.Done()
		rr := r.getRowReader()
		defer r.putRowReader(rr)
		for ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= len(sel.Series) {
				return
			}
			if err := rr.readSeries(ctx, &sel, i, locked); err != nil {
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
	rr.head = clip(rr.r.headPoints(rr.head[:0], tsuid, start, end), start, end)
	if err := b.AddPoints(len(rr.head)); err != nil {
		return nil, err
	}
	rr.store = rr.store[:0]
	sp := spanOf(s)
	first, last := hourRange(&sp, start, end)
	for h := first; h <= last; h += hourMs {
		n := len(rr.store)
		var err error
		if rr.store, err = rr.getRow(ctx, rr.store, tsuid, h); err != nil {
			return nil, err
		}
		if err := b.AddPoints(len(rr.store) - n); err != nil {
			return nil, err
		}
	}
	store := clip(rr.store, start, end)
	if len(store)+len(rr.head) == 0 {
		return nil, nil // the caller may still have notes
	}
	return mergeHead(make([]series.Point, 0, len(store)+len(rr.head)), store, rr.head), nil
}
