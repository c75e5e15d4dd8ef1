package index

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tsd-db/tsd/schema"
)

// blockAlloc hands out values of one counter in the meta table's counter
// row, reserving them a block at a time with Increment. A value is handed
// out once per process and, since the counter never decreases, never by
// another process: values left in a block when the process ends are
// skipped, never reused.
type blockAlloc struct {
	qual     []byte
	block    int
	limit    uint64        // largest usable value
	lifetime time.Duration // a block older than this is given up; 0: never

	mu   sync.Mutex
	next uint64 // guarded by mu; [next, end] is free, empty when next > end
	end  uint64 // guarded by mu
	born time.Time
}

// take appends n fresh values to dst. A stale block's unused range is
// returned in gaveUp (first > last when none) for the caller to void.
func (ix *Index) take(ctx context.Context, a *blockAlloc, dst []uint64, n int) (vals []uint64, gaveUp [2]uint64, err error) {
	vals, _, gaveUp, err = ix.takeAt(ctx, a, dst, n)
	return vals, gaveUp, err
}

// takeAt is take that also returns when the last value's block was
// reserved.
func (ix *Index) takeAt(ctx context.Context, a *blockAlloc, dst []uint64, n int) (vals []uint64, born time.Time, gaveUp [2]uint64, err error) {
	gaveUp = [2]uint64{1, 0}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lifetime > 0 && a.next <= a.end && ix.opts.Clock().Sub(a.born) > a.lifetime {
		gaveUp = [2]uint64{a.next, a.end}
		a.next, a.end = 1, 0
	}
	for n > 0 {
		if a.next > a.end {
			if err := ix.reserve(ctx, a, n); err != nil {
				return dst, born, gaveUp, err
			}
		}
		for ; n > 0 && a.next <= a.end; n-- {
			dst = append(dst, a.next)
			a.next++
		}
	}
	return dst, a.born, gaveUp, nil
}

// reserve increments the counter by max(block, n); the caller holds a.mu.
func (ix *Index) reserve(ctx context.Context, a *blockAlloc, n int) error {
	delta := int64(max(a.block, n))
	var v int64
	err := ix.retry(ctx, func() (err error) {
		v, err = ix.meta.Increment(ctx, schema.MetaSeriesIDRow, schema.MetaFamilyIndex, a.qual, delta)
		return err
	})
	if err != nil {
		return fmt.Errorf("reserve %s block: %w", a.qual, err)
	}
	if v < delta || uint64(v) > a.limit {
		return fmt.Errorf("%w: counter %s at %d", ErrExhausted, a.qual, v)
	}
	a.next, a.end, a.born = uint64(v-delta+1), uint64(v), ix.opts.Clock()
	return nil
}

// release gives up the rest of a's block and returns it (first > last when
// there was none left). With onlyStale it does so only when the block has
// outlived its lifetime.
func (ix *Index) release(a *blockAlloc, onlyStale bool) [2]uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next > a.end || (onlyStale && ix.opts.Clock().Sub(a.born) <= a.lifetime) {
		return [2]uint64{1, 0}
	}
	r := [2]uint64{a.next, a.end}
	a.next, a.end = 1, 0
	return r
}
