package admit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tsd-db/tsd/api/admit"
)

// waitFor polls cond until it holds; the limit only guards liveness.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func newLimiter(t *testing.T, o admit.Options) *admit.Limiter {
	t.Helper()
	l, err := admit.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSlotsQueueAndRefusal: two slots are taken at once, the next two
// queries wait (the queue holds two), the fifth is refused; the waiters
// get the slots in the order they came, and the counters say so.
func TestSlotsQueueAndRefusal(t *testing.T) {
	l := newLimiter(t, admit.Options{MaxConcurrent: 2, MaxQueued: 2})
	ctx := context.Background()
	for range 2 {
		if err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range 2 {
		wg.Go(func() {
			if err := l.Acquire(ctx); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		})
		waitFor(t, "a waiter", func() bool { return l.Stats().Waiting == int64(i+1) })
	}
	if err := l.Acquire(ctx); !errors.Is(err, admit.ErrOverloaded) {
		t.Fatalf("a fifth query: %v, want ErrOverloaded", err)
	}
	for i := range 2 { // one at a time: each wakes one waiter, which records itself
		l.Release()
		waitFor(t, "a waiter served", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == i+1 })
	}
	wg.Wait()
	if len(order) != 2 || order[0] != 0 || order[1] != 1 {
		t.Errorf("slots went to %v, want the waiters in order [0 1]", order)
	}
	want := admit.Stats{Running: 2, Waiting: 0, Admitted: 4, Queued: 2, Refused: 1}
	if got := l.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// TestResumeNeverRefused: with the slot taken and the queue full of new
// queries, an answer resuming still waits its turn (FIFO, behind the
// queries queued before it) instead of being refused.
func TestResumeNeverRefused(t *testing.T) {
	l := newLimiter(t, admit.Options{MaxConcurrent: 1, MaxQueued: 1})
	ctx := context.Background()
	if err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 2)
	go func() {
		if l.Acquire(ctx) == nil {
			got <- "new"
			l.Release()
		}
	}()
	waitFor(t, "the new query queued", func() bool { return l.Stats().Waiting == 1 })
	go func() {
		if l.Resume(ctx) == nil {
			got <- "resume"
			l.Release()
		}
	}()
	waitFor(t, "the resume queued", func() bool { return l.Stats().Waiting == 2 })
	if err := l.Acquire(ctx); !errors.Is(err, admit.ErrOverloaded) {
		t.Fatalf("a new query past the queue: %v", err)
	}
	l.Release()
	if a, b := <-got, <-got; a != "new" || b != "resume" {
		t.Errorf("served %s then %s, want new then resume", a, b)
	}
	if s := l.Stats(); s.Running != 0 || s.Waiting != 0 || s.Queued != 1 {
		t.Errorf("stats %+v: a resume counted as queued, or a slot leaked", s)
	}
}

// TestWaitEndsWithContext: a waiter whose context ends leaves the queue
// and frees its place; the slot later released is not lost.
func TestWaitEndsWithContext(t *testing.T) {
	l := newLimiter(t, admit.Options{MaxConcurrent: 1, MaxQueued: 1})
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting past the context: %v", err)
	}
	if s := l.Stats(); s.Waiting != 0 {
		t.Fatalf("the abandoned waiter is still queued: %+v", s)
	}
	l.Release()
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatalf("after release: %v", err)
	}
	if s := l.Stats(); s.Running != 1 {
		t.Errorf("stats %+v, want one slot taken", s)
	}
}

// TestManyQueriesNeverOversubscribe runs many goroutines taking and giving
// back slots (some resuming): no more than MaxConcurrent hold one at once.
func TestManyQueriesNeverOversubscribe(t *testing.T) {
	l := newLimiter(t, admit.Options{MaxConcurrent: 3, MaxQueued: 1000})
	var (
		mu        sync.Mutex
		now, most int
		wg        sync.WaitGroup
	)
	for i := range 64 {
		wg.Go(func() {
			for j := range 50 {
				take := l.Acquire
				if (i+j)%3 == 0 {
					take = l.Resume
				}
				if err := take(context.Background()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				now++
				most = max(most, now)
				mu.Unlock()
				mu.Lock()
				now--
				mu.Unlock()
				l.Release()
			}
		})
	}
	wg.Wait()
	if most > 3 || most == 0 {
		t.Fatalf("%d slots held at once, limit 3", most)
	}
	if s := l.Stats(); s.Running != 0 || s.Waiting != 0 {
		t.Fatalf("stats %+v after every release", s)
	}
}

// TestAcquireWithin: a free slot is taken at once; with none free the
// wait ends at its bound, and the queue's limit still refuses at once.
func TestAcquireWithin(t *testing.T) {
	l := newLimiter(t, admit.Options{MaxConcurrent: 1, MaxQueued: 1})
	if err := l.AcquireWithin(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := l.AcquireWithin(context.Background(), 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with the slot taken: %v, want the wait's deadline", err)
	}
	if s := l.Stats(); s.Admitted != 1 || s.Queued != 1 || s.Waiting != 0 {
		t.Errorf("stats %+v", s)
	}
}
