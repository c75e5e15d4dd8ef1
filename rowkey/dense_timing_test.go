package rowkey

import (
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/series"
)

// benchRows holds the first hour of the devops dataset per mode, encoded
// both ways, and the whole day's bytes per point.
type benchRows struct {
	base      int64
	rows      [][]series.Point
	dense     [][]byte
	xor       [][]byte
	densePerP float64
	xorPerP   float64
}

var (
	benchOnce [2]sync.Once
	benchData [2]*benchRows
)

func loadBench(b *testing.B, mode gen.ValueMode) *benchRows {
	benchOnce[mode].Do(func() {
		d := &benchRows{}
		devopsHours(b, mode, 1, func(base int64, rows [][]series.Point) {
			d.base = base
			var enc DenseEncoder
			for _, r := range rows {
				row := append([]series.Point(nil), r...)
				v, err := enc.Append(nil, base, row)
				if err != nil {
					b.Fatal(err)
				}
				d.rows = append(d.rows, row)
				d.dense = append(d.dense, v)
				d.xor = append(d.xor, xorChunk(b, row).Bytes())
			}
		})
		d.densePerP, d.xorPerP = devopsSizes(b, mode, 24)
		benchData[mode] = d
	})
	return benchData[mode]
}

var modes = []gen.ValueMode{gen.ValuesInt, gen.ValuesFloat}

// BenchmarkDenseEncode encodes one 360-point row per op; B/pt is the
// whole day's dense size, xorB/pt Prometheus's on the same points.
func BenchmarkDenseEncode(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.String(), func(b *testing.B) {
			d := loadBench(b, mode)
			var enc DenseEncoder
			var buf []byte
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				buf, _ = enc.Append(buf[:0], d.base, d.rows[i%len(d.rows)])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*360), "ns/pt")
			b.ReportMetric(d.densePerP, "B/pt")
			b.ReportMetric(d.xorPerP, "xorB/pt")
			b.ReportMetric(d.densePerP/d.xorPerP, "vsXOR")
		})
	}
}

// BenchmarkXOREncode is the Prometheus peer of BenchmarkDenseEncode.
func BenchmarkXOREncode(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.String(), func(b *testing.B) {
			d := loadBench(b, mode)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				row := d.rows[i%len(d.rows)]
				c := chunkenc.NewXORChunk()
				app, _ := c.Appender()
				for _, p := range row {
					app.Append(0, p.T, p.Float())
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*360), "ns/pt")
		})
	}
}

var sinkPoint series.Point

// BenchmarkDenseDecode decodes one row per op through DenseIter.
func BenchmarkDenseDecode(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.String(), func(b *testing.B) {
			d := loadBench(b, mode)
			var it DenseIter
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				it.Reset(d.base, d.dense[i%len(d.dense)])
				for it.Next() {
					sinkPoint = it.At()
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*360), "ns/pt")
		})
	}
}

// BenchmarkXORDecode is the Prometheus peer of BenchmarkDenseDecode.
func BenchmarkXORDecode(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.String(), func(b *testing.B) {
			d := loadBench(b, mode)
			var it chunkenc.Iterator
			c := chunkenc.NewXORChunk()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c2, _ := chunkenc.FromData(chunkenc.EncXOR, d.xor[i%len(d.xor)])
				c = c2.(*chunkenc.XORChunk)
				it = c.Iterator(it)
				for it.Next() != chunkenc.ValNone {
					t, v := it.At()
					sinkPoint.T, sinkPoint.Bits = t, uint64(v)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*360), "ns/pt")
		})
	}
}

// BenchmarkDecodeVsXOR alternates dense and XOR decoding of the same rows
// in slices of 50 rows, so that both see the same machine load; it reports
// each one's ns/pt and their ratio (dense/xor, lower is better).
func BenchmarkDecodeVsXOR(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.String(), func(b *testing.B) {
			d := loadBench(b, mode)
			var it DenseIter
			var xit chunkenc.Iterator
			var dense, xor time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				for r := 0; r < 50; r++ {
					it.Reset(d.base, d.dense[(i+r)%len(d.dense)])
					for it.Next() {
						sinkPoint = it.At()
					}
				}
				mid := time.Now()
				for r := 0; r < 50; r++ {
					c, _ := chunkenc.FromData(chunkenc.EncXOR, d.xor[(i+r)%len(d.xor)])
					xit = c.Iterator(xit)
					for xit.Next() != chunkenc.ValNone {
						t, v := xit.At()
						sinkPoint.T, sinkPoint.Bits = t, uint64(v)
					}
				}
				dense, xor = dense+mid.Sub(start), xor+time.Since(mid)
				i += 50
			}
			pts := float64(b.N * 50 * 360)
			b.ReportMetric(float64(dense.Nanoseconds())/pts, "dense-ns/pt")
			b.ReportMetric(float64(xor.Nanoseconds())/pts, "xor-ns/pt")
			b.ReportMetric(float64(dense)/float64(xor), "dense/xor")
		})
	}
}
