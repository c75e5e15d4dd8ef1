package harness

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		0.2634: "0.263", 12.5: "12.5", 999: "999", 12_345: "12.3k", 4_100_000: "4.1M", 2.5e9: "2.5G",
	} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestRunAlternatesAndTables runs a fake figure set (pure functions, not
// mocks of anything) and checks medians, ratios, n/a and error cells.
func TestRunAlternatesAndTables(t *testing.T) {
	e, err := NewEnv(Size{Runs: 3}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var order []string
	seq := func(who string, vs ...float64) Measure {
		i := 0
		return func(*Env) (float64, error) {
			order = append(order, who)
			i++
			return vs[i-1], nil
		}
	}
	figs := []Figure{
		{Name: "a", Unit: "x/s", TSD: Side{Name: "t", Measure: seq("t", 10, 30, 20)}, Peer: Side{Name: "p", Measure: seq("p", 5, 5, 50)}},
		{Name: "b", Unit: "B", LowerIsBetter: true, Once: true, TSD: Side{Missing: "n/a (issue 6)"}, Peer: Side{Name: "p", Measure: seq("p", 7)}},
		{Name: "c", Unit: "ms", TSD: Side{Name: "t", Measure: func(*Env) (float64, error) { return 0, errors.New("boom") }}, Peer: Side{Name: "p", Measure: seq("p", 1, 1, 1)}},
	}
	rs := Run(e, figs)
	if got := strings.Join(order[:6], ""); got != "tppttp" {
		t.Fatalf("run order %q, want alternating tppttp", got)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rs); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(b.String()), " ") // ignore padding
	for _, want := range []string{
		"| a ↑ | 20 x/s (t) | 5 x/s (p) | 4.00x | 3 |",
		"| b ↓ | n/a (issue 6) | 7 B (p) | - | 1 |",
		"| c ↑ | error (see log)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestMachine(t *testing.T) {
	if m := Machine(); !strings.Contains(m, "logical CPUs") || !strings.Contains(m, "go1.") {
		t.Fatalf("Machine() = %q", m)
	}
}

func TestClocks(t *testing.T) {
	// Spin until both 30 ms of CPU and 30 ms of wall time have passed, so
	// either clock must read at least 30 ms however loaded the machine is.
	for _, c := range []Clock{ClockCPU, ClockWall} {
		e := &Env{Clock: c}
		x := 0
		d, err := e.Time(func() error {
			cpu0, err := processCPU()
			for start := time.Now(); err == nil; x++ {
				var cpu time.Duration
				cpu, err = processCPU()
				if cpu-cpu0 >= 30*time.Millisecond && time.Since(start) >= 30*time.Millisecond {
					break
				}
			}
			return err
		})
		if err != nil || d < 30*time.Millisecond || d > time.Minute {
			t.Fatalf("%s clock: %v, %v (x=%d)", c, d, err, x)
		}
	}
	if _, err := ParseClock("sundial"); err == nil {
		t.Fatal("ParseClock accepted sundial")
	}
	if _, err := rate(10, 0); err == nil {
		t.Fatal("rate accepted a zero duration")
	}
}
