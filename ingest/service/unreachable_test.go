package service

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// stalledTable is the real UID table behind a store that stops answering
// once stalled: reads wait until their context ends, as the Bigtable
// engine's client does while it retries an unreachable server.
type stalledTable struct {
	storage.Table
	stalled atomic.Bool
	gets    atomic.Int32
}

func (s *stalledTable) Get(ctx context.Context, row []byte, o *storage.ReadOptions) ([]storage.Cell, error) {
	if s.stalled.Load() {
		s.gets.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Table.Get(ctx, row, o)
}

// GetAppend stalls as Get does.
func (s *stalledTable) GetAppend(ctx context.Context, dst []storage.Cell, buf, row []byte, o *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	if s.stalled.Load() {
		s.gets.Add(1)
		<-ctx.Done()
		return dst, buf, ctx.Err()
	}
	return s.Table.GetAppend(ctx, dst, buf, row, o)
}

// TestSessionStoreUnreachable: with the UID table not answering, a point
// of a new name is throttled after uid's StoreTimeout, the rest of the
// request is throttled at once without asking the store again, points of
// known series before it still commit, and after Rollback a new name is
// tried again and lands once the store answers.
func TestSessionStoreUnreachable(t *testing.T) {
	s := newStack(t, nil)
	// The known series' names are assigned first through the stack's own
	// UIDs, with no tight bound: a loaded machine once took more than the
	// bound to assign "host" and failed the commit below. u's bound only
	// has to be met by reads of names already stored.
	for _, n := range []struct {
		k    uid.Kind
		name string
	}{{uid.Metric, "known"}, {uid.TagK, "host"}, {uid.TagV, "a"}} {
		if _, err := s.uids.Resolve(context.Background(), n.k, []byte(n.name)); err != nil {
			t.Fatal(err)
		}
	}
	st := &stalledTable{Table: s.uids.Table()}
	u, err := uid.New(st, &uid.Options{Logger: quietLogger(), StoreTimeout: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(Options{UIDs: u, Head: s.head, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pt := func(metric string, ts int64) *parse.Point {
		return &parse.Point{Metric: []byte(metric), Tags: []parse.Tag{{Key: []byte("host"), Value: []byte("a")}},
			Value: series.IntPoint(ts, 1)}
	}
	sess := w.Session(Put)
	defer sess.Release()
	if err := sess.Add(ctx, pt("known", 1356998400000)); err != nil {
		t.Fatal(err)
	}
	st.stalled.Store(true)
	if err := sess.Add(ctx, pt("known", 1356998401000)); err != nil {
		t.Fatalf("known series while the store is down: %v", err)
	}
	if err := sess.Add(ctx, pt("new1", 1356998400000)); !errors.Is(err, ErrThrottled) || !storage.IsRetryable(err) {
		t.Fatalf("new name while the store is down: %v, want throttled and retryable", err)
	}
	for i := range 50 {
		if err := sess.Add(ctx, pt("new2", 1356998400000+int64(i))); !errors.Is(err, ErrThrottled) {
			t.Fatalf("point %d after the store failed: %v", i, err)
		}
	}
	if n := st.gets.Load(); n != 1 {
		t.Errorf("%d reads of the stalled store, want 1 (the rest of the request refused at once)", n)
	}
	if got := w.Stats(Put).Throttled.Load(); got != 51 {
		t.Errorf("throttled count %d, want 51", got)
	}
	// OpenTSDB's rpc.errors type=hbase_errors, not socket_writes_blocked.
	if c := w.Stats(Put); c.StoreErrors.Load() != 51 || c.Blocked.Load() != 0 {
		t.Errorf("store errors %d, blocked %d; want 51 0", c.StoreErrors.Load(), c.Blocked.Load())
	}
	if err := sess.Commit(false); err != nil {
		t.Fatalf("commit of the known series' points: %v", err)
	}
	if got := s.points(t, "known", "host", "a"); len(got) != 2 {
		t.Errorf("known series holds %q, want 2 points", got)
	}
	st.stalled.Store(false)
	if err := sess.Add(ctx, pt("new1", 1356998400000)); err != nil {
		t.Fatalf("new name after the store is back: %v", err)
	}
}
