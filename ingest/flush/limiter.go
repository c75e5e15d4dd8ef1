package flush

import (
	"context"
	"sync"
	"time"
)

// limiter is a token bucket that lets a caller go into debt: wait(n) takes
// n tokens at once and sleeps until the bucket would have held them, so a
// batch larger than the burst is paced rather than refused.
type limiter struct {
	rate  float64 // tokens per second; <= 0 is unlimited
	burst float64

	mu     sync.Mutex
	tokens float64   // guarded by mu; negative is debt
	last   time.Time // guarded by mu
}

// newLimiter returns a bucket of rate tokens per second holding at most a
// tenth of a second's worth (at least one token), full at the start.
func newLimiter(rate float64) *limiter {
	burst := max(rate/10, 1)
	return &limiter{rate: rate, burst: burst, tokens: burst, last: time.Now()}
}

// wait takes n tokens and returns once they are paid for, or when ctx ends.
func (l *limiter) wait(ctx context.Context, n int) error {
	if l.rate <= 0 || n <= 0 {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= float64(n)
	debt := -l.tokens
	l.mu.Unlock()
	if debt <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(debt / l.rate * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
