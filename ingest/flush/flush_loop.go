package flush

import (
	"context"
	"time"
)

// DefaultFlushInterval is how often a started Flusher looks for complete rows.
const DefaultFlushInterval = 10 * time.Second

// Start runs Flush(now, false) every interval (DefaultFlushInterval if
// zero) on a goroutine the Flusher owns until Stop, and relieves memory
// pressure (Relieve) whenever the head goes over MaxMemory. Errors go to
// the head's logger; the rows stay in the head and the next round retries
// them. Rounds are skipped while FlushOptions.Gate is closed. While a
// loop runs the head throttles commits only when flushing fails or falls
// behind (head.HeadOptions.MaxMemory). Start and Stop are not safe for
// concurrent use with each other.
func (f *Flusher) Start(interval time.Duration) {
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.loop.cancel = cancel
	f.h.FlushLoopStarted()
	f.loop.wg.Add(1)
	go func() {
		defer f.loop.wg.Done()
		f.run(ctx, interval)
	}()
}

// run is the loop of Start.
func (f *Flusher) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if f.opts.Gate.Err() != nil {
				continue // read-only: the rows wait in the head and the log
			}
			f.background(ctx, "flush", func() error {
				_, err := f.Flush(ctx, f.hopts.Clock(), false)
				return err
			})
			if f.h.OverLimit() {
				f.relieve(ctx, interval)
			}
		case <-f.h.Pressure():
			if f.opts.Gate.Err() == nil {
				f.relieve(ctx, interval)
			}
		}
	}
}

// relieve runs Relieve; when memory is still over the limit afterwards (a
// failed write, or nothing left to flush) it pauses before the next try
// so that a failing store is not hammered by every refused commit.
func (f *Flusher) relieve(ctx context.Context, interval time.Duration) {
	f.background(ctx, "early flush", func() error {
		_, err := f.Relieve(ctx, f.hopts.Clock())
		return err
	})
	if !f.h.OverLimit() {
		return
	}
	t := time.NewTimer(min(time.Second, interval))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// background runs one step of the loop and logs its error.
func (f *Flusher) background(ctx context.Context, what string, step func() error) {
	if err := step(); err != nil && ctx.Err() == nil {
		f.hopts.Logger.Warn("ingest: background "+what+" failed", "err", err)
	}
}

// Stop ends the goroutine Start began, cancelling a flush in progress, and
// waits for it. It does not flush: at shutdown call Flush(ctx, now, true)
// after Stop, then close the head.
func (f *Flusher) Stop() {
	if f.loop.cancel == nil {
		return
	}
	f.loop.cancel()
	f.loop.wg.Wait()
	f.loop.cancel = nil
	f.h.FlushLoopStopped()
}

// Relieve writes the oldest open rows, complete or not, until the head's
// memory is an eighth below MaxMemory, without the rate limit. Rows whose
// hour is not over are written as partial columns and queued for
// compaction; later points for their hour become further columns that the
// compactor merges. The started loop calls it when the head goes over the
// limit.
func (f *Flusher) Relieve(ctx context.Context, now time.Time) (st FlushStats, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() { f.count(&st) }()
	target := f.h.RelieveTarget()
	for f.h.MemoryBytes() > target {
		base, ok := f.h.OldestHour()
		if !ok {
			break
		}
		f.mu.entries = f.h.TakeHours(f.mu.entries[:0], func(b int64) bool { return b == base })
		f.mu.until = func() bool { return f.h.MemoryBytes() <= target }
		err = f.flushEntries(ctx, now, func(string, int64, int64) bool { return true }, false, &st)
		f.mu.until = nil
		if err != nil {
			return st, err
		}
	}
	return f.truncate(&st)
}
