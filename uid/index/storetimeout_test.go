package index

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// stalledTable is the real meta table behind a store that stops answering
// once stalled: writes wait until their context ends, as a remote engine's
// client does while it retries an unreachable server.
type stalledTable struct {
	storage.Table
	stalled atomic.Bool
}

func (s *stalledTable) wait(ctx context.Context) error {
	if !s.stalled.Load() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *stalledTable) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Table.Put(ctx, row, cells)
}

func (s *stalledTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Table.Apply(ctx, muts)
}

func (s *stalledTable) Increment(ctx context.Context, row []byte, fam string, q []byte, d int64) (int64, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.Table.Increment(ctx, row, fam, q, d)
}

func (s *stalledTable) CheckAndPut(ctx context.Context, row []byte, fam string, q, exp []byte, cells []storage.Cell) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Table.CheckAndPut(ctx, row, fam, q, exp, cells)
}

// TestRegisterSeriesStoreTimeout: while the meta table does not answer,
// the head's registrar call for a new series fails within StoreTimeout
// with a retryable error (the writer's 503), a known series still costs
// no store call, and the series registers once the store is back.
func TestRegisterSeriesStoreTimeout(t *testing.T) {
	s := openStore(t)
	st := &stalledTable{Table: s.meta}
	s.meta = st
	o := manual()
	o.StoreTimeout = 50 * time.Millisecond
	ix := s.open(t, o)
	known, fresh := s.tsuid(t, "m", "host=a"), s.tsuid(t, "m", "host=b")
	if err := ix.RegisterSeries(known); err != nil {
		t.Fatal(err)
	}
	st.stalled.Store(true)
	if err := ix.RegisterSeries(known); err != nil {
		t.Errorf("known series with the store down: %v", err)
	}
	begin := time.Now()
	err := ix.RegisterSeries(fresh)
	if !storage.IsRetryable(err) || !strings.Contains(err.Error(), "series index did not answer within 50ms") {
		t.Errorf("new series with the store down: %v, want a retryable timeout", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("new series took %v with StoreTimeout 50ms", d)
	}
	st.stalled.Store(false)
	if err := ix.RegisterSeries(fresh); err != nil {
		t.Fatalf("new series after the store is back: %v", err)
	}
	if ix.mem.get(fresh) == nil {
		t.Errorf("series not known after registering")
	}
}
