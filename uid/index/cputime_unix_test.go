//go:build unix

package index

import (
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time of the process: on a
// shared machine a benchmark's CPU cost is steadier than its wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
