package telnet

import (
	"bytes"
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/cputime"
)

// BenchmarkParsePut parses bench/gen's telnet lines (devops float: "put
// cpu_usage_user 1767225600 41.04" and 10 tags, about 200 bytes); one op is
// one line.
func BenchmarkParsePut(b *testing.B) {
	bodies, _ := gen.MustBodies(b, gen.Config{Values: gen.ValuesFloat}, gen.FormatTelnet, 1000, 10_000)
	var lines [][]byte
	for _, body := range bodies {
		for _, l := range bytes.Split(bytes.TrimSuffix(body, []byte{'\n'}), []byte{'\n'}) {
			lines = append(lines, l)
		}
	}
	p := newParser(b, nil)
	var pt parse.Point
	b.ReportAllocs()
	b.SetBytes(int64(len(lines[0])))
	i := 0
	cpu := cputime.Process()
	for b.Loop() {
		if err := p.ParsePut(lines[i%len(lines)], &pt); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(b.N)/(cputime.Process()-cpu).Seconds(), "lines/cpu-s")
}
