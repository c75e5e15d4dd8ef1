package admit

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Default values of Options.
const (
	// DefaultMaxQueued is the default length of the queue.
	DefaultMaxQueued = 100
)

// DefaultMaxConcurrent is the default number of slots: two per CPU the Go
// runtime may use.
func DefaultMaxConcurrent() int { return 2 * runtime.GOMAXPROCS(0) }

// ErrOverloaded is Acquire's refusal when every slot is taken and the
// queue is full.
var ErrOverloaded = errors.New("too many queries running and waiting")

// Options configure a Limiter. The zero value of each field means its
// default.
type Options struct {
	// MaxConcurrent is the number of slots, queries running at once
	// (tsd.query.max_concurrent). Default 2 × GOMAXPROCS.
	MaxConcurrent int
	// MaxQueued is the most new queries waiting for a slot
	// (tsd.query.max_queued); negative means none may wait. Default 100.
	MaxQueued int
}

// EnsureDefaults sets every zero field to its default and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MaxConcurrent == 0 {
		o.MaxConcurrent = DefaultMaxConcurrent()
	}
	if o.MaxQueued == 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	return o
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	if o.MaxConcurrent < 1 {
		return fmt.Errorf("admit: MaxConcurrent %d must be at least 1", o.MaxConcurrent)
	}
	return nil
}

// Stats are a Limiter's counters and gauges.
type Stats struct {
	// Running and Waiting are the slots taken and the queries queued now.
	Running, Waiting int64
	// Admitted counts the queries that took a slot, Queued those of them
	// that waited for it, Refused those turned away with ErrOverloaded.
	Admitted, Queued, Refused int64
}

// Limiter hands out query slots. Make it with New.
type Limiter struct {
	opts Options
	// mu guards the slots and the queue. Lock order: mu, then nothing.
	mu struct {
		sync.Mutex
		running int
		queue   list.List // *waiter, FIFO
		newOnes int       // waiters from Acquire, bounded by MaxQueued
	}
	admitted, queued, refused atomic.Int64
}

// waiter is a queued query; its channel is closed when a slot is handed
// to it.
type waiter struct {
	ready  chan struct{}
	resume bool
}

// New returns a Limiter for opts after EnsureDefaults and Validate.
func New(opts Options) (*Limiter, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Limiter{opts: opts}, nil
}

// Options returns the limiter's options, defaults filled.
func (l *Limiter) Options() Options { return l.opts }

// Acquire takes a slot for a new query, waiting in the queue while every
// slot is taken. It fails with ErrOverloaded when the queue is full, or
// with ctx's error when ctx ends first. Each success needs one Release.
func (l *Limiter) Acquire(ctx context.Context) error {
	err := l.take(ctx, false)
	switch {
	case err == nil:
		l.admitted.Add(1)
	case errors.Is(err, ErrOverloaded):
		l.refused.Add(1)
	}
	return err
}

// AcquireWithin is Acquire waiting at most wait (no bound when wait is
// not positive); ErrOverloaded or context.DeadlineExceeded when it cannot.
// A slot free at once costs no timer.
func (l *Limiter) AcquireWithin(ctx context.Context, wait time.Duration) error {
	if l.tryTake() {
		l.admitted.Add(1)
		return nil
	}
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	return l.Acquire(ctx)
}

// tryTake takes a free slot when no one waits for one.
func (l *Limiter) tryTake() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.running < l.opts.MaxConcurrent && l.mu.queue.Len() == 0 {
		l.mu.running++
		return true
	}
	return false
}

// Resume takes a slot back for an answer that gave its up while writing:
// as Acquire, but it is never refused and does not count as a new query.
func (l *Limiter) Resume(ctx context.Context) error { return l.take(ctx, true) }

// take takes a slot at once or waits in the queue for one.
func (l *Limiter) take(ctx context.Context, resume bool) error {
	l.mu.Lock()
	if l.mu.running < l.opts.MaxConcurrent && l.mu.queue.Len() == 0 {
		l.mu.running++
		l.mu.Unlock()
		return nil
	}
	if !resume && l.mu.newOnes >= max(l.opts.MaxQueued, 0) {
		l.mu.Unlock()
		return ErrOverloaded
	}
	w := &waiter{ready: make(chan struct{}), resume: resume}
	e := l.mu.queue.PushBack(w)
	if !resume {
		l.mu.newOnes++
		l.queued.Add(1)
	}
	l.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		return l.abandon(ctx, e, w)
	}
}

// abandon takes w out of the queue after its context ended; a slot
// handed to it meanwhile is passed on.
func (l *Limiter) abandon(ctx context.Context, e *list.Element, w *waiter) error {
	l.mu.Lock()
	select {
	case <-w.ready: // handed a slot as ctx ended: give it on
		l.releaseLocked()
	default:
		l.mu.queue.Remove(e)
		l.forget(w)
	}
	l.mu.Unlock()
	return ctx.Err()
}

// Release gives a slot back, handing it to the first query waiting.
func (l *Limiter) Release() {
	l.mu.Lock()
	l.releaseLocked()
	l.mu.Unlock()
}

func (l *Limiter) releaseLocked() {
	front := l.mu.queue.Front()
	if front == nil {
		l.mu.running--
		return
	}
	w := l.mu.queue.Remove(front).(*waiter)
	l.forget(w)
	close(w.ready) // the slot passes on: running is unchanged
}

// forget stops counting w as queued.
func (l *Limiter) forget(w *waiter) {
	if !w.resume {
		l.mu.newOnes--
	}
}

// Stats returns the counters and gauges.
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	running, waiting := l.mu.running, l.mu.queue.Len()
	l.mu.Unlock()
	return Stats{Running: int64(running), Waiting: int64(waiting),
		Admitted: l.admitted.Load(), Queued: l.queued.Load(), Refused: l.refused.Load()}
}
