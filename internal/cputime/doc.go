// Package cputime reads the CPU time a process or thread has used, the
// clock tsd's benchmarks report beside wall time: on a shared machine a
// benchmark's CPU cost is steadier than its wall time. Platforms without
// getrusage read 0, which benchmarks show as a zero figure rather than
// failing.
package cputime
