package api

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// latencyBuckets is the size of latencyHistogram: four buckets per power
// of two of microseconds, up to 2^63.
const latencyBuckets = 4 + 62*4

// latencyHistogram counts durations in buckets a quarter of a power of two
// wide, lock-free; percentiles are a bucket's upper bound, within 25 % of
// the true figure. It is cumulative since start, as OpenTSDB's
// http.latency histogram is.
type latencyHistogram struct {
	counts [latencyBuckets]atomic.Int64
}

// bucketOf is the bucket of us microseconds: us itself below 4, else 4
// per power of two by the two bits after the leading one.
func bucketOf(us uint64) int {
	if us < 4 {
		return int(us)
	}
	l := bits.Len64(us) - 1 // >= 2
	sub := int(us>>(l-2)) & 3
	return 4 + (l-2)*4 + sub
}

// upperBound is the largest duration, in microseconds, bucket i counts.
func upperBound(i int) uint64 {
	if i < 4 {
		return uint64(i)
	}
	l, sub := (i-4)/4+2, uint64((i-4)%4)
	return (4+sub+1)<<(l-2) - 1
}

func (h *latencyHistogram) observe(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d/time.Microsecond))].Add(1)
}

// snapshot returns how many durations were observed and the p-th
// percentile of each ps, in milliseconds (0 with none observed).
func (h *latencyHistogram) snapshot(ps ...float64) (n int64, pct []int64) {
	var c [latencyBuckets]int64
	for i := range c {
		c[i] = h.counts[i].Load()
		n += c[i]
	}
	for _, p := range ps {
		rank, seen, v := int64(p/100*float64(n)+0.999999), int64(0), int64(0)
		for i := range c {
			if seen += c[i]; n > 0 && seen >= max(rank, 1) {
				v = int64(upperBound(i) / 1000)
				break
			}
		}
		pct = append(pct, v)
	}
	return n, pct
}

// HTTPStats are the HTTP requests answered and their latency
// percentiles, OpenTSDB's http.latency_50pct, _75pct, _90pct and _95pct
// (milliseconds from the request's head read to its handler's return).
type HTTPStats struct {
	Requests           int64
	P50, P75, P90, P95 int64
}

// HTTPStats returns the HTTP counters; safe for concurrent use.
func (s *Server) HTTPStats() HTTPStats {
	n, p := s.latency.snapshot(50, 75, 90, 95)
	return HTTPStats{Requests: n, P50: p[0], P75: p[1], P90: p[2], P95: p[3]}
}
