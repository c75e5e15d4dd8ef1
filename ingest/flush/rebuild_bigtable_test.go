//go:build !race

// Not built under -race, as rollup_bigtable_test.go.

package flush

import "testing"

// TestRebuildRollupsBigtable is TestRebuildRollups on the Bigtable engine
// over an in-process emulator (one per store).
func TestRebuildRollupsBigtable(t *testing.T) {
	runRebuild(t, openBigtableStore, min(rebuildRounds(), bigtableRounds))
}
