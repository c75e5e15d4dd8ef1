package main

import (
	"testing"
	"time"

	cpebble "github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestRebucketPebbleFsync: pebble's fsync histogram (nanoseconds, its
// hundred bounds) re-bucketed onto fsyncBuckets keeps exact cumulative
// counts: each kept bound, in seconds, counts exactly the observations
// at or below it, and the bounds run from 100 µs to 10 s.
func TestRebucketPebbleFsync(t *testing.T) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Buckets: cpebble.FsyncLatencyBuckets})
	obs := []time.Duration{50 * time.Microsecond, 100 * time.Microsecond, 180 * time.Microsecond, 900 * time.Microsecond,
		3 * time.Millisecond, 7 * time.Millisecond, 40 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second, 9 * time.Second, time.Minute}
	for _, d := range obs {
		h.Observe(float64(d))
	}
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	out := rebucket(m.Histogram.GetBucket(), fsyncBuckets)
	if len(out) < 10 {
		t.Fatalf("%d bounds kept, want most of %d: %v", len(out), len(fsyncBuckets), out)
	}
	lo, hi := 1.0, 0.0
	for le, n := range out {
		lo, hi = min(lo, le), max(hi, le)
		var want uint64
		for _, d := range obs {
			if d.Seconds() <= le*(1+1e-9) {
				want++
			}
		}
		if n != want {
			t.Errorf("le=%g counts %d, want %d", le, n, want)
		}
	}
	if lo < 0.0001*(1-1e-9) || lo > 0.0001*(1+1e-9) || hi < 9.99 || hi > 10.0001 {
		t.Errorf("bounds run %g..%g, want 100 µs..10 s", lo, hi)
	}
}
