package pebble

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used. Unlike
// wall time it does not grow while other processes hold the CPU, so ratios
// of it stay meaningful on a loaded machine.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
