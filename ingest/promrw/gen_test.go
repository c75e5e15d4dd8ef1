package promrw

import (
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
)

// genBodies encodes at most maxPoints points of cfg in format f, batch
// points a body, as bench/parsebench does (which this package's tests
// cannot import: parsebench imports the parsers).
func genBodies(t testing.TB, cfg gen.Config, f gen.Format, batch, maxPoints int) ([][]byte, int) {
	g, err := gen.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := gen.NewEncoder(g, f)
	var bodies [][]byte
	total := 0
	for total < maxPoints {
		body, n, err := e.AppendBatch(nil, min(batch, maxPoints-total))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		bodies = append(bodies, body)
		total += n
	}
	return bodies, total
}

// parser parses one body and returns its number of points.
type parser func(body []byte) (int, error)
