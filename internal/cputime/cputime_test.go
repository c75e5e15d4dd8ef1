package cputime

import (
	"runtime"
	"testing"
)

// TestProcessGrows: burning CPU shows up in Process.
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no getrusage")
	}
	t0 := Process()
	x := uint64(1)
	for i := 0; i < 5000 && Process()-t0 < 20e6; i++ { // up to 20 ms of CPU
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 || Process() <= t0 {
		t.Fatalf("Process did not grow past %v", t0)
	}
}
