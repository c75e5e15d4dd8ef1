package procstat

import (
	"os"
	"testing"
	"time"
)

func TestReadSelf(t *testing.T) {
	before, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU and memory so both readings must move.
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	x := spin(300 * time.Millisecond)
	after, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after.CPUSeconds <= before.CPUSeconds {
		t.Fatalf("CPU seconds did not grow: %v then %v (x=%d)", before.CPUSeconds, after.CPUSeconds, x)
	}
	if after.PeakRSS < 64<<20 || after.PeakRSS < after.RSS || after.RSS <= 0 {
		t.Fatalf("peak RSS %d, RSS %d after touching 64 MiB", after.PeakRSS, after.RSS)
	}
	_ = buf[len(buf)-1]
}

// spin keeps the CPU busy for d of wall time and returns its count of
// turns, which callers print so the loop is not optimized away.
func spin(d time.Duration) int {
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		x++
	}
	return x
}

// TestCPUTime: the threads' schedstat time grows by about the CPU a
// busy loop burns, to well under a clock tick.
func TestCPUTime(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := spin(50 * time.Millisecond)
	after, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d < 5*time.Millisecond || d > 5*time.Second {
		t.Fatalf("CPU time grew by %v over a 50 ms busy loop (x=%d), want tens of milliseconds", d, x)
	}
}

func TestParseStat(t *testing.T) {
	line := "1234 (my ) proc) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0 100 0 0\n"
	got, err := parseStat([]byte(line))
	if err != nil || got != 3.0 {
		t.Fatalf("parseStat = %v, %v; want 3 s (250+50 ticks)", got, err)
	}
	if _, err := parseStat([]byte("1234 no parens")); err == nil {
		t.Fatal("accepted a stat line without a command name")
	}
}

func TestParseStatusMissing(t *testing.T) {
	if _, _, err := parseStatus([]byte("Name: kworker\nState: I\n")); err == nil {
		t.Fatal("accepted a status without VmHWM")
	}
}

func TestReadMissingPid(t *testing.T) {
	if _, err := Read(1 << 30); err == nil {
		t.Fatal("read a process that cannot exist")
	}
}
