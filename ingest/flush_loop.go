package ingest

import (
	"context"
	"time"
)

// DefaultFlushInterval is how often a started Flusher looks for complete rows.
const DefaultFlushInterval = 10 * time.Second

// Start runs Flush(now, false) every interval (DefaultFlushInterval if
// zero) on a goroutine the Flusher owns until Stop. Errors go to the head's
// logger; the rows stay in the head and the next round retries them. Start
// and Stop are not safe for concurrent use with each other.
func (f *Flusher) Start(interval time.Duration) {
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.loop.cancel = cancel
	f.loop.wg.Add(1)
	go func() {
		defer f.loop.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := f.Flush(ctx, f.h.opts.Clock(), false); err != nil && ctx.Err() == nil {
					f.h.opts.Logger.Warn("ingest: background flush failed", "err", err)
				}
			}
		}
	}()
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
}
