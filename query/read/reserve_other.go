//go:build !linux

package read

import "github.com/tsd-db/tsd/series"

// populateBlock populates nothing: only Linux populates a range in one
// call; populate's writes fault each page in.
func populateBlock([]series.Point) int { return 0 }
