package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSmoke is the CI smoke run: the whole harness on the smoke size, every
// row filled with a number or an explicit n/a, no errors.
func TestSmoke(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-smoke", "-dir", t.TempDir()}, &out, &errs); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, errs.String(), out.String())
	}
	table := out.String()
	t.Log("\n" + table)
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| figure") || strings.HasPrefix(line, "| -") {
			continue
		}
		rows++
		cells := strings.Split(line, "|")
		tsd, peer := strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])
		if strings.Contains(line, "error") || strings.Contains(line, "failed") {
			t.Errorf("row failed: %s", line)
		}
		if tsd == "" || !(strings.HasPrefix(tsd, "n/a") || strings.Contains(tsd, "(")) {
			t.Errorf("tsd cell %q neither a figure nor n/a", tsd)
		}
		if !strings.Contains(peer, "(") {
			t.Errorf("peer cell %q is not a figure", peer)
		}
	}
	if rows < 14 {
		t.Fatalf("%d rows, want at least 14", rows)
	}
	if !strings.Contains(table, "machine: ") || !strings.Contains(table, "clock: cpu time") {
		t.Fatal("no machine line")
	}
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	for _, args := range [][]string{{"-only", "("}, {"-clock", "sundial"}} {
		out.Reset()
		errs.Reset()
		if code := run(args, &out, &errs); code != 2 || !strings.Contains(errs.String(), args[0]) {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs.String())
		}
	}
}

// TestWallClock runs a few CPU-bound rows with the wall clock.
func TestWallClock(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-smoke", "-clock", "wall", "-only", "^decode,|^PromQL", "-dir", t.TempDir()}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	// Two decode rows and four PromQL rows (stored rows and rows in the
	// head), after the header and its rule.
	if n := strings.Count(out.String(), "\n| "); n != 6+2 || strings.Contains(out.String(), "error") {
		t.Fatalf("want 6 rows:\n%s", out.String())
	}
}
