package uid

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// stalledTable is a real table behind a store that stops answering once
// stalled: reads wait until their context ends, as a remote engine's
// client does while it retries an unreachable server.
type stalledTable struct {
	storage.Table
	stalled atomic.Bool
	gets    atomic.Int32
	began   atomic.Pointer[chan struct{}] // when set, told each time a read stalls
}

// stall waits until ctx ends, first telling began.
func (s *stalledTable) stall(ctx context.Context) error {
	if ch := s.began.Load(); ch != nil {
		select {
		case *ch <- struct{}{}:
		default:
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *stalledTable) Get(ctx context.Context, row []byte, o *storage.ReadOptions) ([]storage.Cell, error) {
	s.gets.Add(1)
	if s.stalled.Load() {
		return nil, s.stall(ctx)
	}
	return s.Table.Get(ctx, row, o)
}

// GetAppend stalls as Get does.
func (s *stalledTable) GetAppend(ctx context.Context, dst []storage.Cell, buf, row []byte, o *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	s.gets.Add(1)
	if s.stalled.Load() {
		return dst, buf, s.stall(ctx)
	}
	return s.Table.GetAppend(ctx, dst, buf, row, o)
}

// TestResolveStoreTimeout: while the UID table does not answer, Resolve of
// a new name fails within StoreTimeout with a retryable error (the
// writer's 503), a cached name still resolves without the store, and a
// caller's own cancellation stays a context error.
func TestResolveStoreTimeout(t *testing.T) {
	db := openDB(t)
	base := openUIDs(t, db, Options{})
	st := &stalledTable{Table: base.Table()}
	u, err := New(st, &Options{Logger: quiet, StoreTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	known := mustResolve(t, u, Metric, "known")
	st.stalled.Store(true)
	gets := st.gets.Load()
	if id := mustResolve(t, u, Metric, "known"); id != known || st.gets.Load() != gets {
		t.Errorf("cached name: uid %d (want %d), %d store reads", id, known, st.gets.Load()-gets)
	}
	begin := time.Now()
	_, err = u.Resolve(context.Background(), Metric, []byte("new"))
	if !storage.IsRetryable(err) || !strings.Contains(err.Error(), "uid table did not answer within 50ms") {
		t.Errorf("new name on a stalled store: %v, want a retryable timeout", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("new name took %v with StoreTimeout 50ms", d)
	}
	// The caller cancels while the read stalls, on UIDs whose own timeout
	// cannot come first however slow the machine.
	patient, err := New(st, &Options{Logger: quiet, StoreTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	began := make(chan struct{}, 1)
	st.began.Store(&began)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-began; cancel() }()
	if _, err = patient.Resolve(ctx, Metric, []byte("new")); storage.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: %v, want context.Canceled, not retryable", err)
	}
	st.began.Store(nil)
	st.stalled.Store(false)
	// The store is back: u assigns the name. Its 50 ms bound also covers
	// the assignment's own store calls, which a loaded machine can exceed,
	// so a retryable timeout is tried again; an abandoned attempt may have
	// used up an id, so only a clean first attempt must give known+1.
	var id ID
	tries := 0
	for start := time.Now(); ; {
		tries++
		id, err = u.Resolve(context.Background(), Metric, []byte("new"))
		if err == nil || !storage.IsRetryable(err) || time.Since(start) > 30*time.Second {
			break
		}
	}
	if err != nil || id <= known || (tries == 1 && id != known+1) {
		t.Errorf("new name after the store is back: uid %d, %v after %d tries, want %d", id, err, tries, known+1)
	}
}
