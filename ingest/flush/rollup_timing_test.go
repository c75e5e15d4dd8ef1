package flush

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// BenchmarkFlushRollups flushes a day of 200 series at 10 s (4,800 rows
// of 360 integer points, 1.73 M points) into Pebble with rollups off and
// on (the default configuration, a sole writer: the daemon on its own
// store), hours in the order the flusher takes them. ns/op and
// allocs/op are per whole flush, cpu-ns/op the process CPU of it; the ratio of the two is the rollups'
// share of the flush, which is most of the ingest row of bench/README.md.
func BenchmarkFlushRollups(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			keys := ingesttest.Keys(200)
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				fs := vfs.NewMem()
				s := openStore(b, fs)
				opts := headOpts()
				opts.Clock = func() time.Time { return time.UnixMilli(t0) }
				h := openHead(b, fs, opts)
				appendDay(b, h, keys)
				fo := flushOpts(s)
				fo.RowsPerSecond = -1
				if on {
					ro, hooks := rollupStore(b, s)
					for i, h := range hooks {
						if h != nil {
							ro.Tables[i] = h.Table // bare: one commit a batch
						}
					}
					ro.SoleWriter = true
					fo.Rollups = ro
				}
				f, err := NewFlusher(h, fo)
				if err != nil {
					b.Fatal(err)
				}
				c0 := processCPU(b)
				b.StartTimer()
				st, err := f.Flush(context.Background(), time.UnixMilli(t0+48*hour), true)
				b.StopTimer()
				cpu += processCPU(b) - c0
				if err != nil || st.Rows != int64(24*len(keys)) {
					b.Fatalf("flush: %+v %v", st, err)
				}
				h.Close()
				s.DB.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the process's CPU time so far (user and system, every
// thread: the garbage collector and pebble's goroutines too), steadier
// than ns/op on a shared machine.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// appendDay appends a day of points at 10 s to every series of keys, a
// random walk of small integers, committed every 1,000 points.
func appendDay(b *testing.B, h *head.Head, keys [][]byte) {
	b.Helper()
	a := h.Appender()
	v := int64(0)
	n := 0
	for tm := int64(t0); tm < t0+24*hour; tm += 10_000 {
		for i, key := range keys {
			v += int64((tm/10_000+int64(i))%7) - 3
			if _, err := a.AppendKey(key, series.IntPoint(tm, v)); err != nil {
				b.Fatal(err)
			}
			if n++; n%1000 == 0 {
				if err := a.Commit(false); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := a.Commit(false); err != nil {
		b.Fatal(err)
	}
}
