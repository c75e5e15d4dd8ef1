package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/series"
)

// TestThrottleAndCatchUp: over MaxMemory the loop flushes the oldest rows
// early; when the store fails that cannot work and commits are refused
// with ErrThrottled; once the store is back the loop catches up, commits
// go through, and every acknowledged point is in the store or the head.
func TestThrottleAndCatchUp(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.db.Close()
	data := &hookTable{Table: s.tbl}
	opts := testOpts(nil)
	opts.MaxMemory = 32 << 10
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + 30*time.Minute.Milliseconds()) } // hour 0 is open
	h := mustOpenHead(t, fs, opts)
	defer h.Close()
	f, err := h.NewFlusher(&FlushOptions{Table: data, Meta: s.meta, WriterID: 3, Grace: time.Hour, RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(5 * time.Millisecond)
	defer f.Stop()
	m := model{}
	a := h.Appender()
	keys := testKeys(40)
	i := 0
	commit := func() error { // one batch of 40 points, one per series
		for _, k := range keys {
			a.AppendKey(k, series.IntPoint(t0+int64(i)*10, int64(i)))
		}
		err := a.Commit(false)
		if err == nil {
			for _, k := range keys {
				m.add(k, series.IntPoint(t0+int64(i)*10, int64(i)))
			}
			i++
		}
		return err
	}
	// A healthy store keeps up: memory stays bounded, few or no refusals.
	refused := 0
	for i < 800 {
		if err := commit(); errors.Is(err, ErrThrottled) {
			refused++
			time.Sleep(time.Millisecond)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if q := queue(t, s); len(q) == 0 {
		t.Fatal("early flushes queued nothing for compaction")
	}
	t.Logf("healthy store: %d commits refused, memory %d", refused, h.MemoryBytes())

	// The store fails: memory grows until commits are refused.
	data.setFail(true)
	var terr error
	for range 100_000 {
		if terr = commit(); terr != nil {
			break
		}
	}
	var te *ThrottleError
	if !errors.As(terr, &te) || !IsRetryable(terr) || te.Limit != 32<<10 {
		t.Fatalf("with the store down, commit returned %v", terr)
	}
	if msg := terr.Error(); !strings.HasPrefix(msg, "Please throttle writes: head memory ") || !strings.HasSuffix(msg, " over limit 32 KiB") {
		t.Fatalf("throttle text %q", msg)
	}

	// The store is back: the client's retries get through.
	data.setFail(false)
	deadline := time.Now().Add(20 * time.Second)
	for commit() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("still throttled with the store back; memory %d", h.MemoryBytes())
		}
		time.Sleep(2 * time.Millisecond)
	}
	for range 200 {
		if err := commit(); err != nil && !errors.Is(err, ErrThrottled) {
			t.Fatal(err)
		}
	}
	f.Stop()
	if _, err := f.Flush(context.Background(), opts.Clock(), true); err != nil {
		t.Fatal(err)
	}
	m.checkStore(t, s, 1<<30)
	c, err := f.NewCompactor(&CompactOptions{RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.checkStore(t, s, 1)
}

func TestThrottleWithoutFlusher(t *testing.T) {
	opts := testOpts(nil)
	opts.MaxMemory = 4 << 10
	h := mustOpenHead(t, vfs.NewMem(), opts)
	defer h.Close()
	a := h.Appender()
	var err error
	for i := 0; err == nil && i < 100_000; i++ {
		a.AppendKey(seriesKey(1, 1, uint32(i%50)), series.IntPoint(t0+int64(i), 1))
		err = a.Commit(false)
	}
	if !errors.Is(err, ErrThrottled) || h.MemoryBytes() <= 4<<10 {
		t.Fatalf("a head without a flusher over its limit: %v, memory %d", err, h.MemoryBytes())
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 64 << 10: "64 KiB", 2 << 30: "2 GiB", 2254857830: "2.1 GiB", 1536 << 20: "1.5 GiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
