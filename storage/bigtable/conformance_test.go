package bigtable

import (
	"flag"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/storagetest"
)

var conformanceSteps = flag.Int("storagetest.steps", 0, "model-based steps of the conformance suite (0: the suite's default)")

// TestConformance runs the whole storage contract against a fresh in-process
// emulator per DB: no network beyond loopback, no shared state.
func TestConformance(t *testing.T) {
	steps := *conformanceSteps
	if steps == 0 && invariants.RaceEnabled {
		steps = 400 // each step is several gRPC round trips; keep -race runs short
	}
	storagetest.Run(t, func(t testing.TB) storage.DB {
		return openEmulated(t)
	}, storagetest.Options{ModelSteps: steps})
}
