package index

import (
	"context"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// RegisterSeriesBatch is RegisterSeries for many keys at once (ingest's
// SeriesBatchRegistrar, called once per commit for the commit's new
// series): the new series among keys are created together, their ids
// reserved with one counter Increment, their rows claimed concurrently and
// announced in one log record per 1024, so a batch of new series costs a
// few synced writes' latency rather than two per series. Each series row is
// written before the call returns, as with RegisterSeries; a series
// another registration in this process is creating is waited for, not
// created twice. When every key is known it is one map lookup per key and
// does not allocate. A bad key fails the call before any write. keys are
// not retained.
func (ix *Index) RegisterSeriesBatch(keys [][]byte) error {
	n := 0
	for _, k := range keys {
		if ix.mem.get(k) == nil {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	items := make([]item, 0, n)
	for _, k := range keys {
		if ix.mem.get(k) == nil {
			items = append(items, item{sp: noSpan, tsuid: k})
		}
	}
	return ix.withStoreTimeout(fmt.Sprintf("register %d series", len(items)), func(ctx context.Context) error {
		return ix.registerShared(ctx, items)
	})
}

// withStoreTimeout runs fn, a registration for a caller without a context
// of its own (the head), bounded by StoreTimeout: its expiry is retryable,
// so a writer answers "retry later" while the store does not answer.
func (ix *Index) withStoreTimeout(what string, fn func(context.Context) error) error {
	if ix.opts.StoreTimeout < 0 {
		return fn(ix.ctx)
	}
	ctx, cancel := context.WithTimeout(ix.ctx, ix.opts.StoreTimeout)
	defer cancel()
	err := fn(ctx)
	if err != nil && ctx.Err() != nil && ix.ctx.Err() == nil {
		err = storage.MarkRetryable(fmt.Errorf("%s: series index did not answer within %v: %w", what, ix.opts.StoreTimeout, err))
	}
	return err
}

// registerShared creates the series of items, sharing each creation with
// the other registrations of its TSUID in this process: it leads the
// TSUIDs nobody is creating and creates them in one batch, then waits for
// the others. It never waits before its own creations are done and
// released, so two batches leading each other's TSUIDs cannot deadlock.
func (ix *Index) registerShared(ctx context.Context, items []item) error {
	for i := range items {
		if err := checkTSUID(ix.opts.Widths, items[i].tsuid); err != nil {
			return err
		}
	}
	if ix.closed.Load() {
		return ErrClosed
	}
	var lead []item
	var leadCalls, waits []*call
	var waitSpans []span
	for _, it := range items {
		c, leader := ix.join(it.tsuid)
		if leader {
			lead, leadCalls = append(lead, it), append(leadCalls, c)
		} else {
			waits, waitSpans = append(waits, c), append(waitSpans, it.sp)
		}
	}
	err := ix.createLed(ctx, lead, leadCalls)
	for i, c := range waits {
		if werr := ix.await(ctx, c, waitSpans[i]); err == nil {
			err = werr
		}
	}
	return err
}

// createLed creates the series of lead, createChunk at a time, and
// releases each one's call (with its entry or the error) whatever happens.
func (ix *Index) createLed(ctx context.Context, lead []item, calls []*call) error {
	var err error
	for len(lead) > 0 {
		n := min(len(lead), createChunk)
		var es []*seriesEntry
		if err == nil {
			if es, err = ix.create(ctx, lead[:n]); err != nil {
				err = fmt.Errorf("index: register %d series: %w", len(lead), err)
			}
		}
		for i, c := range calls[:n] {
			if err != nil {
				c.err = err
			} else {
				c.e = es[i]
			}
			ix.leave(lead[i].tsuid, c)
		}
		lead, calls = lead[n:], calls[n:]
	}
	return err
}

// await waits for another registration's creation and widens its entry
// to sp.
func (ix *Index) await(ctx context.Context, c *call, sp span) error {
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if c.err != nil {
		return c.err
	}
	ix.widen(c.e, sp)
	return nil
}
