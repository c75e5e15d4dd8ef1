package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestCPUSince: a turn's log line tells the CPU each daemon process used
// during the turn; a busy process shows it, a server without a process
// of its own (a test's) is left out.
func TestCPUSince(t *testing.T) {
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Skipf("no sh: %v", err)
	}
	defer func() {
		busy.Process.Kill()
		busy.Wait()
	}()
	ds := []*daemon{{name: "busy", cmd: busy}, {name: "none"}, nil}
	cpu0 := cpuOf(ds)
	if cpu0[0] < 0 || cpu0[1] != -1 || cpu0[2] != -1 {
		t.Fatalf("cpuOf = %v, want the busy process's seconds and -1 twice", cpu0)
	}
	time.Sleep(300 * time.Millisecond)
	got := cpuSince(ds, cpu0)
	m := regexp.MustCompile(`^; CPU during the turn: busy (\d+)\.\d ms$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("cpuSince = %q, want the busy process alone", got)
	}
	if ms, _ := strconv.Atoi(m[1]); ms < 20 {
		t.Fatalf("busy process used %d ms of CPU in 300 ms, want at least 20", ms)
	}
	if got := cpuSince(ds[1:], cpuOf(ds[1:])); got != "" {
		t.Fatalf("cpuSince without processes = %q, want empty", got)
	}
}
