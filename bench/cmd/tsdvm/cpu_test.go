package main

import (
	"context"
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
	m := regexp.MustCompile(`^; CPU meanwhile: busy (\d+)\.\d ms$`).FindStringSubmatch(got)
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

// TestWaitQuiet: a turn waits while another daemon's process is busy, up
// to maxQuietWait, and not for a quiet one or for its own side.
func TestWaitQuiet(t *testing.T) {
	start := func(script string) *exec.Cmd {
		c := exec.Command("sh", "-c", script)
		if err := c.Start(); err != nil {
			t.Skipf("no sh: %v", err)
		}
		t.Cleanup(func() {
			c.Process.Kill()
			c.Wait()
		})
		return c
	}
	busy := &daemon{name: "busy", cmd: start("while :; do :; done")}
	quiet := &daemon{name: "quiet", cmd: start("sleep 60")}
	ctx := context.Background()
	if w := waitQuiet(ctx, []*daemon{busy, quiet}, 0, maxQuietWait); w > time.Second {
		t.Fatalf("timing the busy side, the quiet other: waited %v, want none", w)
	}
	if w := waitQuiet(ctx, []*daemon{quiet, busy, nil}, 0, maxQuietWait); w < maxQuietWait/2 {
		t.Fatalf("the other side busy throughout: waited %v, want about %v", w, maxQuietWait)
	}
	if got := waitedNote(2 * time.Millisecond); got != "" {
		t.Fatalf("a 2 ms wait noted as %q", got)
	}
}
