//go:build race || invariants

package invariants

// Enabled is true in builds with -race or -tags invariants.
const Enabled = true

// RaceEnabled reports that the race detector is on (allocation assertions skip).
const RaceEnabled = raceEnabled
