package read

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/rowkey"
)

// task is one read's unit of work: a series or a salt bucket, i its
// index, read with the calling worker's rowReader. Every plan gives its
// state as a task, so all share one worker pool.
type task interface {
	run(ctx context.Context, rr *rowReader, i int) error
}

// taskFunc is a function as a task.
type taskFunc func(ctx context.Context, rr *rowReader, i int) error

func (f taskFunc) run(ctx context.Context, rr *rowReader, i int) error { return f(ctx, rr, i) }

// forSeries runs t for every selected series, on the caller's goroutine
// when the per-series plan reads sel inline, else on Parallelism workers.
func (r *Reader) forSeries(ctx context.Context, sel *Selection, t task) error {
	workers := r.opts.Parallelism
	if r.inline(sel) {
		workers = 1
	}
	return r.forEach(ctx, len(sel.Series), workers, t)
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

// forBuckets runs t for every salt bucket, at most Parallelism at once.
func (r *Reader) forBuckets(ctx context.Context, t task) error {
	return r.forEach(ctx, r.buckets(), r.opts.Parallelism, t)
}

// forEach runs t for i in [0, n) on at most workers workers (the caller
// one of them), each with its own rowReader, and returns the first error,
// which cancels the calls not yet done. A single worker is the caller
// alone, without a context of its own to cancel.
//
// Workers take the indexes in turn rather than one goroutine per index:
// each new goroutine grows its stack again through the store's deep
// iterator calls.
func (r *Reader) forEach(ctx context.Context, n, workers int, t task) error {
	workers = min(workers, n)
	if workers <= 1 {
		rr := r.getRowReader()
		defer r.putRowReader(rr)
		for i := range n {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err := t.run(ctx, rr, i); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	work := func() {
		defer wg.Done()
		rr := r.getRowReader()
		defer r.putRowReader(rr)
		for ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			if err := t.run(ctx, rr, i); err != nil {
				cancel(err)
				return
			}
		}
	}
	wg.Add(workers)
	for range workers - 1 {
		go work()
	}
	work() // the caller is one of the workers
	wg.Wait()
	return context.Cause(ctx)
}
