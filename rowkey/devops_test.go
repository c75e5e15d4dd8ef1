package rowkey

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/series"
)

// devopsHours streams the bench devops dataset (100 hosts x 10 cpu
// fields, one point every 10 s) hour by hour: fn gets the row of every
// series for that hour, 360 points each. rows is reused between calls.
func devopsHours(tb testing.TB, mode gen.ValueMode, hours int, fn func(baseSec int64, rows [][]series.Point)) {
	tb.Helper()
	g, err := gen.New(gen.Config{Values: mode, Span: time.Duration(hours) * time.Hour})
	if err != nil {
		tb.Fatal(err)
	}
	rows := make([][]series.Point, g.NumSeries())
	nm := len(g.Metrics())
	var p gen.Point
	base := int64(-1)
	for g.Next(&p) {
		b := BaseTime(p.T)
		if b != base {
			if base >= 0 {
				fn(base, rows)
			}
			base = b
			for i := range rows {
				rows[i] = rows[i][:0]
			}
		}
		i := p.Host*nm + p.Metric
		rows[i] = append(rows[i], p.Series())
	}
	fn(base, rows)
}

// xorChunk encodes a row as one Prometheus XOR chunk.
func xorChunk(tb testing.TB, pts []series.Point) *chunkenc.XORChunk {
	c := chunkenc.NewXORChunk()
	app, err := c.Appender()
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range pts {
		app.Append(0, p.T, p.Float())
	}
	return c
}

// devopsSizes returns the dense and XOR bytes per point over hours.
func devopsSizes(tb testing.TB, mode gen.ValueMode, hours int) (dense, xor float64) {
	var enc DenseEncoder
	var it DenseIter
	var buf []byte
	var dst []series.Point
	var nd, nx, np int
	devopsHours(tb, mode, hours, func(base int64, rows [][]series.Point) {
		for _, row := range rows {
			var err error
			if buf, err = enc.Append(buf[:0], base, row); err != nil {
				tb.Fatal(err)
			}
			if dst, err = it.DecodeDense(dst[:0], base, buf); err != nil || len(dst) != len(row) {
				tb.Fatalf("decode: %v", err)
			}
			nd += len(buf)
			nx += len(xorChunk(tb, row).Bytes())
			np += len(row)
		}
	})
	return float64(nd) / float64(np), float64(nx) / float64(np)
}

// TestDenseDevopsFigures checks issue 5's size figures on the first hours
// of the bench dataset (the benchmarks report the whole day).
func TestDenseDevopsFigures(t *testing.T) {
	hours := 3
	if testing.Short() {
		hours = 1
	}
	di, xi := devopsSizes(t, gen.ValuesInt, hours)
	df, xf := devopsSizes(t, gen.ValuesFloat, hours)
	t.Logf("int: dense %.3f B/pt, xor %.3f B/pt; float: dense %.3f B/pt, xor %.3f B/pt (%.2fx)", di, xi, df, xf, df/xf)
	if di > 0.35 {
		t.Errorf("int mode: %.3f bytes per point, want <= 0.35", di)
	}
	if df > 0.6*xf {
		t.Errorf("float mode: %.3f bytes per point, %.2fx XOR's %.3f, want <= 0.6x", df, df/xf, xf)
	}
}
