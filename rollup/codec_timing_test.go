package rollup

import (
	"fmt"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

func benchDay(b testing.TB) (*Interval, int64, []series.Point, []Cell) {
	iv := &DefaultConfig().Intervals[1]
	base := int64(1370476800)
	pts := make([]series.Point, 0, 8640)
	for i := range int64(8640) {
		pts = append(pts, series.IntPoint((base+i*10)*1000, 1000+i%17))
	}
	return iv, base, pts, Fold(nil, iv, base, pts)
}

func BenchmarkFold(b *testing.B) {
	iv, base, pts, _ := benchDay(b)
	cells := make([]Cell, 0, 24)
	b.ReportAllocs()
	b.SetBytes(int64(len(pts)))
	for b.Loop() {
		cells = Fold(cells[:0], iv, base, pts)
	}
}

func BenchmarkPackedEncode(b *testing.B) {
	iv, base, _, cells := benchDay(b)
	var enc RowEncoder
	buf, _ := enc.Append(nil, iv, base, cells)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = enc.Append(buf[:0], iv, base, cells)
	}
	b.ReportMetric(float64(len(buf)), "bytes/row")
}

// BenchmarkPackedDecode decodes a day of hour cells as RowEncoder writes
// it (v3) and as tsd wrote it before (v2, entropy-coded columns).
func BenchmarkPackedDecode(b *testing.B) {
	iv, base, _, cells := benchDay(b)
	var enc RowEncoder
	var old denseRowEncoder
	v3, _ := enc.Append(nil, iv, base, cells)
	v2, _ := old.Append(nil, iv, base, cells)
	for _, v := range [][]byte{v3, v2} {
		b.Run(fmt.Sprintf("v%d", v[0]), func(b *testing.B) {
			var dec RowDecoder
			out, _ := dec.Decode(nil, iv, base, v)
			b.ReportAllocs()
			for b.Loop() {
				out, _ = dec.Decode(out[:0], iv, base, v)
			}
			b.ReportMetric(float64(len(v)), "bytes/row")
		})
	}
}

func BenchmarkQualifier(b *testing.B) {
	q := make([]byte, 0, 3)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q, _ = AppendQualifier(q[:0], 2, i&1023, rowkey.FlagFloat|7)
		if _, err := ParseQualifier(q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseColumn(b *testing.B) {
	iv := &DefaultConfig().Intervals[1]
	q := []byte{0, 0, 0xf1}
	v := []byte{1, 0x27}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseColumn(iv, 1370476800, q, v); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCodecAllocs(t *testing.T) {
	iv, base, pts, cells := benchDay(t)
	var enc RowEncoder
	var dec RowDecoder
	buf, _ := enc.Append(nil, iv, base, cells)
	out, _ := dec.Decode(nil, iv, base, buf)
	fold := make([]Cell, 0, 24)
	q := make([]byte, 0, 3)
	for name, fn := range map[string]func(){
		"fold":   func() { fold = Fold(fold[:0], iv, base, pts) },
		"encode": func() { buf, _ = enc.Append(buf[:0], iv, base, cells) },
		"decode": func() { out, _ = dec.Decode(out[:0], iv, base, buf) },
		"qualifier": func() {
			q, _ = AppendQualifier(q[:0], 1, 7, 0)
			_, _ = ParseQualifier(q)
			_, _, _ = ParseColumn(iv, base, q, []byte{3})
		},
	} {
		if n := testing.AllocsPerRun(20, fn); n != 0 {
			t.Errorf("%s: %v allocations per run", name, n)
		}
	}
}
