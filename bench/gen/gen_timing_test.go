package gen

import (
	"testing"
)

var sinkBytes []byte

func benchGen(b *testing.B, cfg Config) *Gen {
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkNext(b *testing.B) {
	for _, vm := range []ValueMode{ValuesInt, ValuesFloat} {
		b.Run(vm.String(), func(b *testing.B) {
			g := benchGen(b, Config{Values: vm})
			var p Point
			b.ReportAllocs()
			for b.Loop() {
				if !g.Next(&p) {
					g.Reset()
				}
			}
		})
	}
}

func BenchmarkFormat(b *testing.B) {
	for _, f := range []Format{FormatTelnet, FormatJSON, FormatInflux, FormatRemoteWrite} {
		b.Run(f.String(), func(b *testing.B) {
			g := benchGen(b, Config{})
			e := NewEncoder(g, f)
			var buf []byte
			points := 0
			b.ReportAllocs()
			for b.Loop() {
				var n int
				buf, n, _ = e.AppendBatch(buf[:0], 1000)
				if n == 0 {
					g.Reset()
				}
				points += n
			}
			sinkBytes = buf
			b.SetBytes(int64(len(buf)))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(points), "ns/point")
		})
	}
}
