//go:build !race

// Not built under -race: it uses pipeline_timing_test.go's namePipeline,
// which is not (and benchmarks never run under -race).

package head

import (
	"context"
	"fmt"
	"testing"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// newSeriesTags names series i of BenchmarkNewSeries: host = i mod 1000,
// dc = i / 1000 (up to 100 values), so 100,000 series share 1,100 tag
// values whose UIDs exist before the timer starts.
func newSeriesTags(dst []uid.Tag, i int) []uid.Tag {
	return append(dst[:0],
		uid.Tag{Key: []byte("host"), Value: fmt.Appendf(nil, "h%d", i%1000)},
		uid.Tag{Key: []byte("dc"), Value: fmt.Appendf(nil, "d%d", i/1000%100)})
}

// BenchmarkNewSeries creates new series through a NameAppender, 500 per
// synced commit as an /api/put?sync request of new series does, with the
// series index on the embedded engine on disk as the head's registrar and
// every UID already assigned: the cost measured is the series' creation
// and registration. One op is one new series.
func BenchmarkNewSeries(b *testing.B) {
	const batch = 500
	p := openNamePipeline(b, nil)
	defer p.close()
	ctx := context.Background()
	metric := []byte("bench.new")
	var tags []uid.Tag
	for i := range 1000 {
		tags = newSeriesTags(tags, i*101) // every host and every dc value
		if _, err := p.u.ResolvePoint(ctx, nil, metric, tags); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		tags = newSeriesTags(tags, i%100000)
		if _, err := p.na.Append(ctx, metric, tags, series.IntPoint(1_700_000_000_000+int64(i/100000), 1)); err != nil {
			b.Fatal(err)
		}
		if i%batch == batch-1 || i == b.N-1 {
			if err := p.na.Commit(true); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "series/s")
}
