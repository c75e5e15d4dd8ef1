package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun runs the command on a small dataset, in memory and on disk, and
// checks its table and both summary lines.
func TestRun(t *testing.T) {
	for _, mem := range []string{"-mem=true", "-mem=false"} {
		var out, errb bytes.Buffer
		if code := run([]string{"-series", "200", "-buckets", "4", mem}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", mem, code, errb.String())
		}
		s := out.String()
		for _, want := range []string{
			"devops series: 200 (20 hosts x 10 metrics, seed 1)",
			"bucket  series\n",
			"salt width 1, 4 buckets: 200 series, mean 50.0,",
			"salt width 0, 1 buckets: 200 series, mean 200.0, max 200 (bucket 0), min 200 (bucket 0), max/mean 1.0000\n",
		} {
			if !strings.Contains(s, want) {
				t.Fatalf("%s: output lacks %q:\n%s", mem, want, s)
			}
		}
		if n := strings.Count(s, "\n"); n != 8 {
			t.Fatalf("%s: %d lines, want 8:\n%s", mem, n, s)
		}
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-width", "9"}, {"-buckets", "0"}, {"-series", "-5"}, {"-width", "1", "-buckets", "300"}, {"extra"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code == 0 {
			t.Fatalf("%v: exit 0, want an error", args)
		}
		if errb.Len() == 0 {
			t.Fatalf("%v: no message on stderr", args)
		}
	}
}
