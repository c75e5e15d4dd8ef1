package query_test

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/query"
)

// BenchmarkExecute runs a group-by query over four series (three hours,
// one store hour row each plus the head) and writes its JSON; points/op
// counts the points read.
func BenchmarkExecute(b *testing.B) {
	s := openStack(b, query.Options{})
	fill(b, s)
	ctx := context.Background()
	var buf []byte
	for _, m := range []string{"sum:sys.cpu{dc=*}", "sum:5m-avg:sys.cpu{host=*}"} {
		b.Run(m, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := mquery(b, sec(t0), sec(t0+3*3600-1), m)
				res, err := s.eng.Execute(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				buf = res.AppendJSON(buf[:0], query.JSONOptions{})
				res.Release()
			}
			b.ReportMetric(float64(4*180-15)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}
