package api

import (
	"testing"
	"time"
)

// TestLatencyHistogram: buckets cover every duration without gaps, and a
// percentile is the upper bound of the bucket holding its rank, within a
// quarter of the true value.
func TestLatencyHistogram(t *testing.T) {
	for us := uint64(0); us < 1<<20; us += 1 + us/64 {
		i := bucketOf(us)
		if us > upperBound(i) || i > 0 && us <= upperBound(i-1) {
			t.Fatalf("%d µs in bucket %d, bounds (%d, %d]", us, i, upperBound(i-1), upperBound(i))
		}
	}
	var h latencyHistogram
	for ms := 1; ms <= 100; ms++ {
		h.observe(time.Duration(ms) * time.Millisecond)
	}
	n, p := h.snapshot(50, 95)
	if n != 100 || p[0] < 50 || p[0] > 50*5/4 || p[1] < 95 || p[1] > 95*5/4 {
		t.Errorf("100 observations 1..100 ms: n %d, p50 %d, p95 %d", n, p[0], p[1])
	}
	var empty latencyHistogram
	if n, p := empty.snapshot(50); n != 0 || p[0] != 0 {
		t.Errorf("empty: %d %v", n, p)
	}
}
