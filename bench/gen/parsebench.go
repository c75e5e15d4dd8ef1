package gen

import (
	"testing"

	"github.com/tsd-db/tsd/internal/cputime"
)

// MustBodies is Bodies failing tb on error, for parser tests and
// benchmarks.
func MustBodies(tb testing.TB, cfg Config, f Format, batch, maxPoints int) ([][]byte, int) {
	tb.Helper()
	bodies, n, err := Bodies(cfg, f, batch, maxPoints)
	if err != nil {
		tb.Fatal(err)
	}
	return bodies, n
}

// Parser parses one body and returns its number of points.
type Parser func(body []byte) (int, error)

// ParseCase is one side of a parser benchmark: a parser and the bodies it
// reads, which hold Points points in all.
type ParseCase struct {
	Name   string
	Parse  Parser
	Bodies [][]byte
	Points int
}

// BenchParsers runs each case as a sub-benchmark, one body an op, and
// reports unit/s (points per wall second) and unit/cpu-s (per CPU second
// of the process, steadier on a shared machine) beside the bytes and
// allocations of a body. Cases run in one benchmark so that tsd and its
// peer are measured in the same run.
func BenchParsers(b *testing.B, unit string, cases ...ParseCase) {
	for _, tc := range cases {
		b.Run(tc.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.Bodies[0])))
			i := 0
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := tc.Parse(tc.Bodies[i%len(tc.Bodies)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			pts := float64(b.N) * float64(tc.Points/len(tc.Bodies))
			b.ReportMetric(pts/b.Elapsed().Seconds(), unit+"/s")
			b.ReportMetric(pts/(cputime.Process()-cpu).Seconds(), unit+"/cpu-s")
		})
	}
}
