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
	if !strings.Contains(table, "machine: ") {
		t.Fatal("no machine line")
	}
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-only", "("}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "-only") {
		t.Fatalf("exit %d, stderr %q", code, errs.String())
	}
}
