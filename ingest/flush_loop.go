package ingest

import (
	"context"
	"time"
)

// DefaultFlushInterval is how often a started Flusher looks for complete rows.
const DefaultFlushInterval = 10 * time.Second

// Start runs Flush(now, false) every interval (DefaultFlushInterval if
// zero) on a goroutine the Flusher owns until Stop. Errors go to the head's
// logger; the rows stay in the head and the next round retries them.
func (f *Flusher) Start(interval time.Duration) {
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	f.loop.stop = make(chan struct{})
	f.loop.wg.Add(1)
	go func() {
		defer f.loop.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-f.loop.stop:
				return
			case <-t.C:
				f.round()
			}
		}
	}()
}

// round runs one background flush, cancelled by Stop.
func (f *Flusher) round() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-f.loop.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err := f.Flush(ctx, f.h.opts.Clock(), false); err != nil {
		f.h.opts.Logger.Warn("ingest: background flush failed", "err", err)
	}
}

// Stop ends the goroutine Start began and waits for it. It does not flush:
// at shutdown call Flush(ctx, now, true) after Stop, then close the head.
func (f *Flusher) Stop() {
	if f.loop.stop == nil {
		return
	}
	close(f.loop.stop)
	f.loop.wg.Wait()
	f.loop.stop = nil
}
