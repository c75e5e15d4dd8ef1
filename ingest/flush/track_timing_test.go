package flush

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// BenchmarkFlushTracking flushes 2,000 rows (1,000 series, two hours,
// 50,000 points) with TSMeta tracking off, marking (enable_tsuid_tracking)
// and counting (enable_tsuid_incrementing): the cost tracking adds is per
// flushed row, on the flusher, never on the append path. ns/op and
// allocs/op are per whole flush.
func BenchmarkFlushTracking(b *testing.B) {
	for _, bc := range []struct {
		name string
		mode tsmeta.Mode
	}{{"off", tsmeta.TrackOff}, {"tracking", tsmeta.TrackLast}, {"incrementing", tsmeta.TrackCount}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			keys := ingesttest.Keys(1000)
			for b.Loop() {
				b.StopTimer()
				fs := vfs.NewMem()
				s := openStore(b, fs)
				opts := headOpts()
				opts.Clock = func() time.Time { return time.UnixMilli(t0 + 4*head.RowSpan) }
				h := openHead(b, fs, opts)
				appendRandom(b, h, rand.New(rand.NewPCG(1, 1)), keys, 50_000, ingesttest.Model{})
				ts, err := tsmeta.New(s.Meta)
				if err != nil {
					b.Fatal(err)
				}
				fo := flushOpts(s)
				fo.Tracker = tsmeta.NewTracker(ts, bc.mode, fo.WriterID)
				f, err := NewFlusher(h, fo)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				st, err := f.Flush(context.Background(), time.UnixMilli(t0+4*head.RowSpan), true)
				b.StopTimer()
				if err != nil || (bc.mode != tsmeta.TrackOff && st.Tracked != st.Rows) {
					b.Fatalf("flush: %+v %v", st, err)
				}
				h.Close()
				s.DB.Close()
				b.StartTimer()
			}
		})
	}
}
