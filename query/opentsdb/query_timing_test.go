package opentsdb_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/series"
)

// BenchmarkExecute runs a group-by query over four series (three hours,
// one store hour row each plus the head) and writes its JSON; points/op
// counts the points read.
func BenchmarkExecute(b *testing.B) {
	s := openStack(b, opentsdb.Options{})
	fill(b, s)
	ctx := context.Background()
	var buf []byte
	for _, m := range []string{"sum:sys.cpu{dc=*}", "sum:5m-avg:sys.cpu{host=*}"} {
		b.Run(m, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				q := mquery(b, sec(t0), sec(t0+3*3600-1), m)
				res, err := s.eng.Execute(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				buf = res.AppendJSON(buf[:0], opentsdb.JSONOptions{})
				res.Release()
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(4*180-15)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}

// BenchmarkExecuteGroupBy is the bench query set's groupby-12h at a
// smaller size: 100 series, 12 hours at 10 s (432,000 points, all in the
// store), hourly avg by host.
func BenchmarkExecuteGroupBy(b *testing.B) {
	s := openStack(b, opentsdb.Options{})
	const hosts, points = 100, 12 * 360
	for h := range hosts {
		pts := make([]series.Point, points)
		for i := range pts {
			pts[i] = series.IntPoint(int64(t0+10*i)*1000, int64(i*7+h)%100)
		}
		s.put(b, "cpu", map[string]string{"host": "host_" + strconv.Itoa(h)}, pts...)
	}
	s.flushAll(b)
	ctx := context.Background()
	var buf []byte
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		res, err := s.eng.Execute(ctx, mquery(b, sec(t0), sec(t0+12*3600-1), "avg:1h-avg:cpu{host=*}"))
		if err != nil {
			b.Fatal(err)
		}
		buf = res.AppendJSON(buf[:0], opentsdb.JSONOptions{})
		res.Release()
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(hosts*points)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}
