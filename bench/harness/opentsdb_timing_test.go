package harness

import (
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/queryset"
)

// BenchmarkOpenTSDB runs the OpenTSDB query rows of tsdbench through
// opentsdb.Engine in process on the dataset BenchmarkPromQL loads (for
// profiling: go test -run - -bench OpenTSDB -cpuprofile).
func BenchmarkOpenTSDB(b *testing.B) {
	_, d, tl := benchDataset(b)
	for _, name := range []string{"single-1h", "groupby-12h"} {
		q, err := queryset.ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		body := q.OpenTSDBBody(time.UnixMilli(d.MaxTime()))
		want := 1
		if q.OpenTSDB[0].Filters[0].GroupBy {
			want = *benchHosts
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0, _ := processCPU()
			for b.Loop() {
				if err := runOpenTSDB(tl.otsdb, body, want); err != nil {
					b.Fatal(err)
				}
			}
			cpu1, _ := processCPU()
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
