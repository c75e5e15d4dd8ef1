package flush

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// liveHead opens a head on fs whose clock runs at the real pace from
// hours after t0, for the started loops, and returns its options.
func liveHead(t testing.TB, fs vfs.FS, hours int64) (*head.Head, *head.HeadOptions) {
	t.Helper()
	opts := headOpts()
	start := time.Now()
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + hours*head.RowSpan).Add(time.Since(start)) }
	return openHead(t, fs, opts), opts
}

// TestLoopsConcurrent runs the flusher and compactor loops while writers
// append to past hours (every row comes due at once, so points keep
// arriving for flushed rows), then shuts down as cmd/tsd does: stop the
// loops, flush everything, drain the queue. The store then holds every
// point, one column per row.
func TestLoopsConcurrent(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs)
			defer s.DB.Close()
			h, opts := liveHead(t, fs, 10)
			defer h.Close()
			f, err := NewFlusher(h, &FlushOptions{Table: s.Tbl, Meta: s.Meta, Format: format, WriterID: 4, Grace: time.Millisecond, Spread: -1, BatchRows: 7})
			if err != nil {
				t.Fatal(err)
			}
			c, err := f.NewCompactor(&CompactOptions{Interval: time.Millisecond, BatchRows: 5})
			if err != nil {
				t.Fatal(err)
			}
			f.Start(time.Millisecond)
			c.Start()
			const writers = 3
			models := make([]ingesttest.Model, writers)
			var wg sync.WaitGroup
			for w := range writers {
				models[w] = ingesttest.Model{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 61))
					a := h.Appender()
					keys := ingesttest.Keys(8)
					for i := range 1500 {
						key := keys[rng.IntN(len(keys))]
						// Writers never share a timestamp: w is the last digit.
						p := series.IntPoint(t0+int64(rng.IntN(4))*head.RowSpan+int64(rng.IntN(100_000))*10+int64(w), int64(i))
						a.AppendKey(key, p)
						models[w].Add(key, p)
						if i%20 == 19 {
							if err := a.Commit(false); err != nil {
								t.Error(err)
								return
							}
							time.Sleep(time.Millisecond)
						}
					}
				}()
			}
			wg.Wait()
			f.Stop()
			c.Stop()
			fst, cst := f.Stats(), c.Stats()
			if fst.Rows == 0 || fst.Queued == 0 || cst.Compacted == 0 {
				t.Fatalf("the loops did not work while writers wrote: flush %+v, compaction %+v", fst, cst)
			}
			ctx := context.Background()
			if _, err := f.Flush(ctx, opts.Clock(), true); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			all := ingesttest.Model{}
			for _, m := range models {
				for k, ps := range m {
					for _, p := range ps {
						all.Add([]byte(k), p)
					}
				}
			}
			all.CheckStore(t, s, 1)
			if q := queue(t, s); len(q) != 0 {
				t.Fatalf("%d rows still queued after drain", len(q))
			}
		})
	}
}

// TestGatePausesLoops: while the gate is closed the started flusher and
// compactor loops write nothing and keep every row in the head; once it
// opens, the next rounds write them all.
func TestGatePausesLoops(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	h, _ := liveHead(t, fs, 10)
	defer h.Close()
	g := ingest.NewGate(ingest.GateOptions{})
	g.SetMode("tsd.mode=ro")
	f, err := NewFlusher(h, &FlushOptions{Table: s.Tbl, Meta: s.Meta, Format: schema.FormatDense, WriterID: 4,
		Grace: time.Millisecond, Spread: -1, Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.NewCompactor(&CompactOptions{Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := ingesttest.Model{}
	a := h.Appender()
	for i, key := range ingesttest.Keys(20) {
		p := series.IntPoint(t0+int64(i)*1000, int64(i))
		if _, err := a.AppendKey(key, p); err != nil {
			t.Fatal(err)
		}
		m.Add(key, p)
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	f.Start(time.Millisecond)
	c.Start()
	defer c.Stop()
	defer f.Stop()
	time.Sleep(50 * time.Millisecond) // fifty rounds
	if st := f.Stats(); st.Rows != 0 {
		t.Fatalf("flushed %d rows while read-only", st.Rows)
	}
	m.Check(t, h)
	g.SetMode("")
	deadline := time.Now().Add(10 * time.Second)
	for f.Stats().Rows < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("rows not flushed after the gate opened: %+v", f.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	m.CheckStore(t, s, 1)
}

// TestThrottleAndCatchUp: over MaxMemory the loop flushes the oldest rows
// early; when the store fails that cannot work and commits are refused
// with head.ErrThrottled; once the store is back the loop catches up, commits
// go through, and every acknowledged point is in the store or the head.
func TestThrottleAndCatchUp(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	data := &ingesttest.HookTable{Table: s.Tbl}
	opts := headOpts()
	opts.MaxMemory = 32 << 10
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + 30*time.Minute.Milliseconds()) } // hour 0 is open
	h := openHead(t, fs, opts)
	defer h.Close()
	f, err := NewFlusher(h, &FlushOptions{Table: data, Meta: s.Meta, WriterID: 3, Grace: time.Hour, RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(5 * time.Millisecond)
	defer f.Stop()
	m := ingesttest.Model{}
	a := h.Appender()
	keys := ingesttest.Keys(40)
	i := 0
	commit := func() error { // one batch of 40 points, one per series
		for _, k := range keys {
			a.AppendKey(k, series.IntPoint(t0+int64(i)*10, int64(i)))
		}
		err := a.Commit(false)
		if err == nil {
			for _, k := range keys {
				m.Add(k, series.IntPoint(t0+int64(i)*10, int64(i)))
			}
			i++
		}
		return err
	}
	// A healthy store keeps up: memory stays bounded, few or no refusals.
	refused := 0
	for i < 800 {
		if err := commit(); errors.Is(err, head.ErrThrottled) {
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
	data.SetFail(true)
	var terr error
	for range 100_000 {
		if terr = commit(); terr != nil {
			break
		}
	}
	var te *head.ThrottleError
	if !errors.As(terr, &te) || !head.IsRetryable(terr) || te.Limit != 32<<10 {
		t.Fatalf("with the store down, commit returned %v", terr)
	}
	if msg := terr.Error(); !strings.HasPrefix(msg, "Please throttle writes: head memory ") || !strings.HasSuffix(msg, " over limit 32 KiB") {
		t.Fatalf("throttle text %q", msg)
	}

	// The store is back: the client's retries get through.
	data.SetFail(false)
	deadline := time.Now().Add(20 * time.Second)
	for commit() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("still throttled with the store back; memory %d", h.MemoryBytes())
		}
		time.Sleep(2 * time.Millisecond)
	}
	for range 200 {
		if err := commit(); err != nil && !errors.Is(err, head.ErrThrottled) {
			t.Fatal(err)
		}
	}
	f.Stop()
	if _, err := f.Flush(context.Background(), opts.Clock(), true); err != nil {
		t.Fatal(err)
	}
	m.CheckStore(t, s, 1<<30)
	c, err := f.NewCompactor(&CompactOptions{RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.CheckStore(t, s, 1)
}
