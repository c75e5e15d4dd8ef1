package bigtable

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// call runs one RPC of an idempotent operation with the retry policy: each
// attempt gets AttemptTimeout, retryable failures are retried up to
// MaxAttempts with capped exponential backoff and full jitter, and the final
// error is classified. step names the operation in the error.
func (db *DB) call(ctx context.Context, step string, fn func(ctx context.Context) error) error {
	var err error
	for attempt := 0; attempt < db.opts.MaxAttempts; attempt++ {
		if attempt > 0 && !db.pause(ctx, attempt) {
			return db.classify(ctx, step, err) // names ctx's end or ErrClosed
		}
		if err = db.callOnce(ctx, step, fn); !storage.IsRetryable(err) {
			return err
		}
	}
	return err
}

// callOnce runs fn once under AttemptTimeout and classifies its error; it is
// the whole policy for operations that must not be repeated.
func (db *DB) callOnce(ctx context.Context, step string, fn func(ctx context.Context) error) error {
	if db.closed.Load() {
		return db.classify(ctx, step, storage.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return db.classify(ctx, step, err)
	}
	actx, cancel := context.WithTimeout(ctx, db.opts.AttemptTimeout)
	defer cancel()
	start := time.Now()
	err := fn(actx)
	if db.opts.ObserveRequest != nil {
		db.opts.ObserveRequest(time.Since(start))
	}
	if err != nil {
		db.rpcs.n.Add(1)
	}
	return db.classify(ctx, step, err)
}

// pause sleeps before retry number attempt (1-based) and reports false if
// ctx ended or the DB closed meanwhile.
func (db *DB) pause(ctx context.Context, attempt int) bool {
	d := db.opts.BackoffBase << min(attempt-1, 30)
	if d > db.opts.BackoffMax || d <= 0 {
		d = db.opts.BackoffMax
	}
	if d > 0 {
		d = time.Duration(rand.Int64N(int64(d)) + 1)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !db.closed.Load()
	case <-ctx.Done():
		return false
	case <-db.done:
		return false
	}
}
