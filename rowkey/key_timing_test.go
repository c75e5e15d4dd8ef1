package rowkey

import (
	"testing"

	"github.com/tsd-db/tsd/series"
)

var sinkBytes []byte

func benchTags() []Tag {
	tags := make([]Tag, 10)
	for i := range tags {
		tags[i] = Tag{[]byte{0, 0, byte(10 - i)}, []byte{0, 1, byte(i)}}
	}
	return tags
}

func BenchmarkAppendRowKey(b *testing.B) {
	l := DefaultLayout()
	tags := benchTags()
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = l.AppendRowKey(buf[:0], uid1, 1356998400000, tags)
	}
	sinkBytes = buf
}

func BenchmarkAppendRowKeyFromTSUID(b *testing.B) {
	l := DefaultLayout()
	tsuid, _ := l.AppendTSUID(nil, uid1, benchTags())
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = l.AppendRowKeyFromTSUID(buf[:0], tsuid, 1356998400000)
	}
	sinkBytes = buf
}

func BenchmarkParseRowKey(b *testing.B) {
	l := DefaultLayout()
	key, _ := l.AppendRowKey(nil, uid1, 1356998400000, benchTags())
	b.ReportAllocs()
	b.SetBytes(int64(len(key)))
	for b.Loop() {
		k, _ := l.ParseRowKey(key)
		sinkBytes = k.Metric
	}
}

// BenchmarkQualifierValue appends one OpenTSDB point (qualifier and value).
func BenchmarkQualifierValue(b *testing.B) {
	pts := []series.Point{series.IntPoint(0, 42), series.Float64Point(0, 42.2), series.IntPoint(0, 1<<40)}
	var q, v []byte
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pts[i%3]
		q, _ = AppendQualifier(q[:0], NewQualifier(int64(i%3600)*1000, ValueFlags(p)))
		v = AppendValue(v[:0], p)
		i++
	}
	sinkBytes = v
}

var sinkPoints []series.Point

// BenchmarkRowDecoder decodes a row of every format and a one-dense-cell
// row of 360 points.
func BenchmarkRowDecoder(b *testing.B) {
	t := &testing.T{}
	mixed, _ := mixedRow(t)
	pts := regular(360, 10000, func(i int) series.Point { return series.IntPoint(0, int64(i%7)) })
	dense := []Cell{denseCell(t, 1, 1, 5, pts...)}
	for name, cells := range map[string][]Cell{"mixed": mixed, "dense360": dense} {
		b.Run(name, func(b *testing.B) {
			var d RowDecoder
			var dst []series.Point
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = d.Decode(dst[:0], testBase, cells)
			}
			sinkPoints = dst
		})
	}
}
