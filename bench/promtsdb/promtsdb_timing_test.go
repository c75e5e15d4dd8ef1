package promtsdb

import (
	"context"
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
)

// BenchmarkHeadAppend appends the devops dataset (100 hosts) to a fresh
// Prometheus head, WAL on, commit every 1,000 samples; one op is one sample.
func BenchmarkHeadAppend(b *testing.B) {
	d, err := Generate(gen.Config{Span: 2 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	done := 0
	var total time.Duration
	for done < b.N {
		b.StopTimer()
		db, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		el, err := Append(context.Background(), db, d, DefaultCommitEvery)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
		total += el
		done += d.NumSamples()
	}
	b.ReportMetric(float64(done)/total.Seconds(), "samples/s")
}
