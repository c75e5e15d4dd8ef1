//go:build !race && !invariants

package invariants

// Enabled is true in builds with -race or -tags invariants.
const Enabled = false

// RaceEnabled reports that the race detector is on (allocation assertions skip).
const RaceEnabled = false
