package read

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/uid/index"
)

// readEach is the per-series plan: workers take series in turn and Get
// their hour rows.
func (r *Reader) readEach(ctx context.Context, sel Selection, fn Func) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		mu   sync.Mutex
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
			s := &sel.Series[i]
			rr.want, rr.notes = sel.Notes, rr.notes[:0]
			pts, err := rr.seriesPoints(ctx, s, sel.Start, sel.End, sel.Budget)
			notes := clipNotes(rr.notes, sel.Start, sel.End)
			if err == nil && len(pts)+len(notes) > 0 {
				mu.Lock()
				err = fn(*s, pts, notes)
				mu.Unlock()
			}
			if err != nil {
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
