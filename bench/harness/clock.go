package harness

import (
	"fmt"
	"syscall"
	"time"
)

// Clock selects how CPU-bound figures are timed. Storage figures, which wait
// on fsync and run several goroutines, always use wall time.
type Clock string

const (
	// ClockCPU times with the process's user+system CPU time (getrusage):
	// work per CPU second, which other tenants of a shared machine barely
	// disturb. It includes GC and every other goroutine of the process.
	ClockCPU Clock = "cpu"
	// ClockWall times with the wall clock.
	ClockWall Clock = "wall"
)

// ParseClock parses "cpu" or "wall".
func ParseClock(s string) (Clock, error) {
	switch Clock(s) {
	case ClockCPU, ClockWall:
		return Clock(s), nil
	}
	return "", fmt.Errorf("unknown clock %q (want cpu or wall)", s)
}

// Time runs f and returns how long it took by the Env's clock.
func (e *Env) Time(f func() error) (time.Duration, error) {
	if e.Clock == ClockWall {
		start := time.Now()
		err := f()
		return time.Since(start), err
	}
	before, err := processCPU()
	if err != nil {
		return 0, err
	}
	err = f()
	after, cerr := processCPU()
	if err == nil {
		err = cerr
	}
	return after - before, err
}

// processCPU returns the process's user+system CPU time so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// rate returns work per second of d, failing on a zero duration (a clock
// too coarse for the work: make the size larger).
func rate(work int, d time.Duration) (float64, error) {
	if d <= 0 {
		return 0, fmt.Errorf("%d units took no measurable time; use a larger size", work)
	}
	return float64(work) / d.Seconds(), nil
}
