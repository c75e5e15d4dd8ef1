package flush

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

func TestLimiter(t *testing.T) {
	ctx := context.Background()
	if err := newLimiter(-1).wait(ctx, 1<<30); err != nil {
		t.Fatalf("unlimited: %v", err)
	}
	l := newLimiter(1000) // burst 100
	if err := l.wait(ctx, 100); err != nil {
		t.Fatalf("within the burst: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	// 1,000 more tokens are a second of debt: the wait must block, so a
	// done context ends it.
	if err := l.wait(done, 1000); !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait in debt returned %v", err)
	}
}

// TestFlushSpread: with a spread, the rows of one hour come due at
// different times after it.
func TestFlushSpread(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	opts := headOpts()
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + 10_000) }
	h := openHead(t, fs, opts)
	defer h.Close()
	a := h.Appender()
	for _, key := range ingesttest.Keys(200) {
		a.AppendKey(key, series.IntPoint(t0, 1))
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	f, err := NewFlusher(h, &FlushOptions{Table: s.Tbl, WriterID: 1, Grace: time.Minute, Spread: 10 * time.Minute, RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Hour 0 rows are due from its end plus a minute, spread over ten more.
	at := func(min int64) int64 {
		st, err := f.Flush(context.Background(), time.UnixMilli(t0+head.RowSpan+min*60_000), false)
		if err != nil {
			t.Fatal(err)
		}
		return st.Rows
	}
	early, mid, late := at(1), at(6), at(11)
	if early > 10 || mid < 50 || late < 50 || early+mid+late != 200 {
		t.Fatalf("hour 0 rows flushed at +1, +6, +11 minutes: %d, %d, %d", early, mid, late)
	}
}
