package last_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tsd-db/tsd/query/last"
	"github.com/tsd-db/tsd/series"
)

// BenchmarkLastMetric: the last point of each of 200 series of one metric
// (hours 0 and 1 flushed to the store, hour 2 in the head, the clock in
// hour 3), back_scan 0; one op answers all 200.
func BenchmarkLastMetric(b *testing.B) {
	f := newFixture(b)
	for h := range int64(3) {
		for s := range 200 {
			f.put(b, fmt.Sprintf("web%03d", s), series.IntPoint(h0+h*hr+int64(s), h))
		}
		if h < 2 {
			f.flushAll(b)
		}
	}
	f.now = h0 + 3*hr
	q := &last.Query{Queries: []last.SubQuery{{Metric: "sys.cpu"}}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		pts, err := f.svc.Last(context.Background(), q)
		if err != nil || len(pts) != 200 {
			b.Fatalf("%d points, %v", len(pts), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*200), "ns/series")
}
