package parsebench

import (
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
)

// BenchmarkPeers parses 1,000-point bodies with the peers and with tsd's
// parsers in the same run; one op is one body.
func BenchmarkPeers(b *testing.B) {
	for _, tc := range []struct {
		name string
		f    gen.Format
		p    Parser
	}{
		{"line-protocol-v2", gen.FormatInflux, Influx},
		{"tsd", gen.FormatInflux, NewInfluxTSD().Parse},
		{"prompb", gen.FormatRemoteWrite, new(RemoteWrite).Parse},
		{"tsd", gen.FormatRemoteWrite, NewRemoteWriteTSD().Parse},
	} {
		b.Run(tc.f.String()+"/"+tc.name, func(b *testing.B) {
			bodies, n, err := Bodies(gen.Config{Values: gen.ValuesFloat}, tc.f, 1000, 50_000)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bodies[0])))
			i := 0
			for b.Loop() {
				if _, err := tc.p(bodies[i%len(bodies)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)*float64(n/len(bodies))/b.Elapsed().Seconds(), "points/s")
		})
	}
}
