package harness

import (
	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/parsebench"
)

// bodies holds pre-encoded request bodies of one format.
type bodies struct {
	bodies [][]byte
	points int
}

// encoded returns ParsePoints points of the float dataset in format f,
// batch points a body (Influx: 1,000 points = 100 lines).
func encoded(e *Env, f gen.Format) (*bodies, error) {
	return Cached(e, "bodies-"+f.String(), func() (*bodies, error) {
		b, n, err := parsebench.Bodies(e.datasetConfig(gen.ValuesFloat), f, 1000, e.Size.ParsePoints)
		return &bodies{b, n}, err
	})
}

func parseRate(f gen.Format, p func() parsebench.Parser) Measure {
	return func(e *Env) (float64, error) {
		b, err := encoded(e, f)
		if err != nil {
			return 0, err
		}
		parse := p()
		d, err := e.Time(func() error {
			_, err := parsebench.Rate(b.bodies, b.points, parse)
			return err
		})
		if err != nil {
			return 0, err
		}
		return rate(b.points, d)
	}
}

var (
	influxPeerRate      = parseRate(gen.FormatInflux, func() parsebench.Parser { return parsebench.Influx })
	remoteWritePeerRate = parseRate(gen.FormatRemoteWrite, func() parsebench.Parser { return new(parsebench.RemoteWrite).Parse })
	influxTSDRate       = parseRate(gen.FormatInflux, func() parsebench.Parser { return parsebench.NewInfluxTSD().Parse })
	remoteWriteTSDRate  = parseRate(gen.FormatRemoteWrite, func() parsebench.Parser { return parsebench.NewRemoteWriteTSD().Parse })
)
