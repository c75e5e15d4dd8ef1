package influx

import (
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/internal/cputime"
)

// BenchmarkDecode parses the bench Influx bodies (devops float, 100 lines
// of 10 fields a body) with tsd's decoder and with line-protocol/v2, in the
// same run; one op is one body, points/s counts fields per wall second and
// points/cpu-s per CPU second of the process (steadier on a shared machine).
func BenchmarkDecode(b *testing.B) {
	bodies, n := genBodies(b, gen.Config{Values: gen.ValuesFloat}, gen.FormatInflux, 1000, 50_000)
	d, _ := NewDecoder(nil)
	tsd := func(body []byte) (int, error) {
		d.Reset(body, Nanosecond, 0)
		k := 0
		for d.Next() {
			if le := d.LineError(); le != nil {
				return k, le
			}
			k++
		}
		return k, d.Err()
	}
	for _, tc := range []struct {
		name string
		p    parser
	}{{"tsd", tsd}, {"line-protocol-v2", peerParse}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bodies[0])))
			i := 0
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := tc.p(bodies[i%len(bodies)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			pts := float64(b.N) * float64(n/len(bodies))
			b.ReportMetric(pts/b.Elapsed().Seconds(), "points/s")
			b.ReportMetric(pts/(cputime.Process()-cpu).Seconds(), "points/cpu-s")
		})
	}
}
