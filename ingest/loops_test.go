package ingest

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

var _ SeriesToucher = (*index.Index)(nil) // the series index is the head's toucher

// TestLoopsConcurrent runs the flusher and compactor loops while writers
// append to past hours (every row comes due at once, so points keep
// arriving for flushed rows), then shuts down as cmd/tsd does: stop the
// loops, flush everything, drain the queue. The store then holds every
// point, one column per row.
func TestLoopsConcurrent(t *testing.T) {
	for _, format := range []uid.Format{uid.FormatDense, uid.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs)
			defer s.db.Close()
			opts := testOpts(nil)
			start := time.Now()
			opts.Clock = func() time.Time { return time.UnixMilli(t0 + 10*RowSpan).Add(time.Since(start)) }
			h := mustOpenHead(t, fs, opts)
			defer h.Close()
			f, err := h.NewFlusher(&FlushOptions{Table: s.tbl, Meta: s.meta, Format: format, WriterID: 4, Grace: time.Millisecond, Spread: -1, BatchRows: 7})
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
			models := make([]model, writers)
			var wg sync.WaitGroup
			for w := range writers {
				models[w] = model{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 61))
					a := h.Appender()
					keys := testKeys(8)
					for i := range 1500 {
						key := keys[rng.IntN(len(keys))]
						// Writers never share a timestamp: w is the last digit.
						p := series.IntPoint(t0+int64(rng.IntN(4))*RowSpan+int64(rng.IntN(100_000))*10+int64(w), int64(i))
						a.AppendKey(key, p)
						models[w].add(key, p)
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
			all := model{}
			for _, m := range models {
				for k, ps := range m {
					for _, p := range ps {
						all.add([]byte(k), p)
					}
				}
			}
			all.checkStore(t, s, 1)
			if q := queue(t, s); len(q) != 0 {
				t.Fatalf("%d rows still queued after drain", len(q))
			}
		})
	}
}
