package telnet

import (
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
)

// genBodies is gen.Bodies failing t on error.
func genBodies(t testing.TB, cfg gen.Config, f gen.Format, batch, maxPoints int) ([][]byte, int) {
	bodies, n, err := gen.Bodies(cfg, f, batch, maxPoints)
	if err != nil {
		t.Fatal(err)
	}
	return bodies, n
}

// parser parses one body and returns its number of points.
type parser func(body []byte) (int, error)
