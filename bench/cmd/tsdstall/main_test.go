package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"

	"github.com/tsd-db/tsd/internal/daemontest"
)

// TestRun runs the whole measurement on the real daemon at a tiny size:
// 20 series x 10 minutes, five stalled clients; the figures print, and
// the answer size and point count are the data's.
func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	// The tests' shared tsd binary (internal/daemontest): the command's own
	// build (buildTSD, without -bin) would link tsd once more.
	args := []string{"-bin", daemontest.Binary(t), "-hosts", "20", "-span", "10m", "-clients", "5", "-n", "5", "-hold", "0s", "-after", "0s"}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	t.Log(out.String())
	for _, re := range []string{
		`tsdstall: 20 series x 10m0s \(1200 points, rows in the store\), large answer 0\.0 MB \(\d{4,5} bytes\), 5 stalled clients`,
		`rss: idle [\d.]+ MiB, stalled [\d.]+ MiB .*: [+-][\d.]+ MiB, [\d.]+x; [\d.]+ MiB after they closed`,
		`healthy single-1h: mean [\d.]+ ms idle before, [\d.]+ ms stalled, [\d.]+ ms idle after \(5 runs each\): [\d.]+x; daemon CPU`,
		`healthy highcard-10: mean .*\(5 runs each\): [\d.]+x; daemon CPU`,
		`floor \(GET /api/version\): mean .*\(5 runs each\): [\d.]+x\n`,
		`healthy client reading the large answer whole: mean .*\(5 runs each\): [\d.]+x\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s", re)
		}
	}
	for _, m := range regexp.MustCompile(`\): ([\d.]+)x`).FindAllStringSubmatch(out.String(), -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v <= 0 {
			t.Errorf("latency ratio %q", m[1])
		}
	}
}
