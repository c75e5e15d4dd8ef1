package head

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/series"
)

// BenchmarkChunkDecode decodes one hour row of a 10 s gauge, as a query of
// unflushed data does for every row it reads from the head; prom decodes
// the same points from Prometheus's XOR chunk, the peer.
func BenchmarkChunkDecode(b *testing.B) {
	for _, kind := range []string{"int", "float"} {
		pts := gauge(kind)
		b.Run(kind+"/tsd", func(b *testing.B) {
			var r openRow
			for _, p := range pts {
				r.chunk.append(0, p)
			}
			dst := make([]series.Point, 0, len(pts))
			b.ReportAllocs()
			for b.Loop() {
				dst = r.appendPoints(dst[:0], 0, RowSpan)
			}
			if len(dst) != len(pts) {
				b.Fatalf("%d points", len(dst))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(pts)), "ns/point")
		})
		b.Run(kind+"/prom", func(b *testing.B) {
			c := chunkenc.NewXORChunk()
			app, err := c.Appender()
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range pts {
				app.Append(0, p.T, p.Float())
			}
			var it chunkenc.Iterator
			b.ReportAllocs()
			for b.Loop() {
				it = c.Iterator(it)
				n := 0
				for it.Next() == chunkenc.ValFloat {
					_, v := it.At()
					n += int(v) & 1
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(pts)), "ns/point")
		})
	}
}

// gauge is an hour of a 10 s gauge around 50: whole numbers for int,
// hundredths for float.
func gauge(kind string) []series.Point {
	rng := rand.New(rand.NewPCG(1, 1))
	v := 50.0
	pts := make([]series.Point, 0, 360)
	for i := range 360 {
		v = min(max(v+rng.NormFloat64(), 0), 100)
		p := series.IntPoint(int64(i)*10_000, int64(math.Round(v)))
		if kind == "float" {
			p = series.Float64Point(int64(i)*10_000, math.Round(v*100)/100)
		}
		pts = append(pts, p)
	}
	return pts
}
