//go:build !linux

package pebble

import "time"

// threadCPU is unavailable here; paired benchmarks then omit CPU ratios.
func threadCPU() time.Duration { return 0 }
