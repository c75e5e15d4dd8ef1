package influx

import (
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
)

// BenchmarkDecode parses the bench Influx bodies (devops float, 100 lines
// of 10 fields a body) with tsd's decoder and with line-protocol/v2, in the
// same run; one op is one body, points/s counts fields per wall second and
// points/cpu-s per CPU second of the process (steadier on a shared machine).
func BenchmarkDecode(b *testing.B) {
	bodies, n := gen.MustBodies(b, gen.Config{Values: gen.ValuesFloat}, gen.FormatInflux, 1000, 50_000)
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
	gen.BenchParsers(b, "points",
		gen.ParseCase{Name: "tsd", Parse: tsd, Bodies: bodies, Points: n},
		gen.ParseCase{Name: "line-protocol-v2", Parse: peerParse, Bodies: bodies, Points: n})
}
