package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// rebuildPoints are 30 hours of points of two metrics on two hosts,
// integers and floats, ending three hours ago.
func rebuildPoints(first int64) []map[string]any {
	var pts []map[string]any
	for i := range 30 * 12 {
		for h, host := range []string{"a", "b"} {
			var v any = i%9 - 4
			if (i+h)%3 == 0 {
				v = float64(i) / 8
			}
			pts = append(pts, map[string]any{"metric": []string{"rb.m1", "rb.m2"}[(i+h)%2], "timestamp": first + int64(i)*300 + int64(h),
				"value": v, "tags": map[string]string{"host": host}})
		}
	}
	return pts
}

// writeStore runs a daemon on a new directory with args, puts pts, stops
// it (its shutdown flush writes every row) and returns the directory.
func writeStore(t *testing.T, pts []map[string]any, args ...string) string {
	t.Helper()
	data := t.TempDir()
	d := startDaemon(t, append([]string{"--data", data}, args...)...)
	d.putJSON(t, pts)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	return data
}

// rollupTableCells returns every cell of the default configuration's
// rollup tables in the store at data, as sorted "table row q = value"
// lines.
func rollupTableCells(t *testing.T, data string) []string {
	t.Helper()
	db, err := pebble.Open(data, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	for _, iv := range rollup.DefaultConfig().Intervals {
		if iv.Default {
			continue
		}
		tbl, err := db.Table(context.Background(), iv.Table)
		if errors.Is(err, storage.ErrNotFound) {
			continue // rollups never on
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := tbl.Scan(context.Background(), &storage.ScanOptions{})
		for sc.Next() {
			r := sc.Row()
			for _, c := range r.Cells {
				out = append(out, fmt.Sprintf("%s %x %x = %x", iv.Table, r.Key, c.Qualifier, c.Value))
			}
		}
		if err := sc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// sameCells fails unless got holds want's cells, and want some.
func sameCells(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference store has no rollup cells", what)
	}
	if slices.Equal(got, want) {
		return
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("%s: missing %s", what, l)
			break
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("%s: extra %s", what, l)
			break
		}
	}
	t.Fatalf("%s: %d rollup cells, want %d", what, len(got), len(want))
}

// TestDaemonRollupRebuild: stores written with tsd.rollups.enable=false,
// then rebuilt by `tsd rollup rebuild --data` (offline) and `--url` (by a
// running daemon, through POST /api/rollup/rebuild), hold exactly the
// rollup cells of the store written with rollups on, in both formats.
func TestDaemonRollupRebuild(t *testing.T) {
	t.Parallel() // its own daemon
	first := time.Now().Add(-33 * time.Hour).Truncate(time.Hour).Unix()
	pts := rebuildPoints(first)
	start, end := strconv.FormatInt(first, 10), strconv.FormatInt(first+31*3600, 10)
	for _, format := range []string{"dense", "opentsdb"} {
		t.Run(format, func(t *testing.T) {
			fa := "--tsd.storage.format=" + format
			want := rollupTableCells(t, writeStore(t, pts, fa))

			off := writeStore(t, pts, fa, "--tsd.rollups.enable=false")
			if got := rollupTableCells(t, off); len(got) != 0 {
				t.Fatalf("rollups off wrote %d rollup cells", len(got))
			}
			cmd := exec.Command(tsdBinary(t), "rollup", "rebuild", "--data", off, fa, start, end)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("tsd rollup rebuild --data: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), "rebuilt rollups: ") || !strings.Contains(stderr.String(), "rollup rebuild") {
				t.Errorf("stdout %q, stderr %q: want the counts and a progress bar", stdout.String(), stderr.String())
			}
			sameCells(t, "--data", rollupTableCells(t, off), want)

			remote := writeStore(t, pts, fa, "--tsd.rollups.enable=false")
			d := startDaemon(t, "--data", remote, fa)
			if code, body := d.Get(t, "/api/rollup/rebuild"); code != 405 {
				t.Errorf("GET /api/rollup/rebuild: %d %s, want 405", code, body)
			}
			out, code := runTSD(t, "rollup", "rebuild", "--url", "http://"+d.Addr, start, end, "rb.m1", "rb.m2")
			if code != exitOK || !strings.Contains(out, "rebuilt rollups: ") {
				t.Fatalf("tsd rollup rebuild --url: exit %d\n%s\n%s", code, out, d.Logs)
			}
			out, code = runTSD(t, "rollup", "rebuild", "--url", "http://"+d.Addr, start, end, "rb.nosuch")
			if code != exitFailed || !strings.Contains(out, "400") {
				t.Errorf("unknown metric: exit %d %s, want 1 and a 400", code, out)
			}
			if err := d.Stop(t); err != nil {
				t.Fatalf("stop: %v\n%s", err, d.Logs)
			}
			sameCells(t, "--url", rollupTableCells(t, remote), want)
		})
	}
}

// TestRollupRebuildArgs: START [END] [METRIC...], END optional, --url and
// --data exclusive.
func TestRollupRebuildArgs(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		args []string
		want rebuildRequest
		err  string
	}{
		{[]string{"1700000000"}, rebuildRequest{Start: 1_700_000_000, End: 1_800_000_000}, ""},
		{[]string{"1700000000", "1700003600", "a.b", "c"}, rebuildRequest{Start: 1_700_000_000, End: 1_700_003_600, Metrics: []string{"a.b", "c"}}, ""},
		{[]string{"2h-ago", "a.b"}, rebuildRequest{Start: 1_800_000_000 - 7200, End: 1_800_000_000, Metrics: []string{"a.b"}}, ""},
		{[]string{"1700003600", "1700000000"}, rebuildRequest{}, "before start"},
		{[]string{"yesterday"}, rebuildRequest{}, "start time"},
	} {
		got, err := parseRebuildRequest(tc.args, now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got.Start != tc.want.Start || got.End != tc.want.End || !slices.Equal(got.Metrics, tc.want.Metrics) {
			t.Errorf("%v: %+v %v, want %+v", tc.args, got, err, tc.want)
		}
	}
	c := newConfig()
	if _, _, err := parseRollupArgs([]string{"rebuild", "--url", "http://h:1", "--data", "/x", "1"}, c.isBoolFlag); err == nil {
		t.Error("--url with --data accepted")
	}
	rc, _, err := parseRollupArgs([]string{"rebuild", "--url=http://h:1/", "1"}, c.isBoolFlag)
	if err != nil || rc.url != "http://h:1" || !slices.Equal(rc.args, []string{"rebuild", "1"}) {
		t.Errorf("--url: %+v %v", rc, err)
	}
}

// TestDaemonRollupTagRaw: tsd.rollups.tag_raw tags what OpenTSDB 2.4 tags,
// rollup points of raw series (TSDB.addAggregatePointInternal puts
// agg_tag_key=raw_agg_tag_value when the point has no group-by
// aggregator), and never raw puts: TSDB.addPoint does not read the key,
// so a put through telnet or /api/put keeps its own tags.
func TestDaemonRollupTagRaw(t *testing.T) {
	ts := time.Now().Add(-2 * time.Hour).Truncate(time.Hour).Unix()
	for _, tagRaw := range []bool{true, false} {
		t.Run(strconv.FormatBool(tagRaw), func(t *testing.T) {
			d := startDaemon(t, "--data", t.TempDir(), "--tsd.rollups.tag_raw="+strconv.FormatBool(tagRaw))
			got := telnetSession(t, d.Addr,
				fmt.Sprintf("put tr.m %d 1 host=a", ts),
				fmt.Sprintf("rollup 1h-sum tr.r %d 5 host=a", ts))
			for _, l := range got {
				if strings.HasPrefix(l, "put:") || strings.HasPrefix(l, "rollup:") {
					t.Fatalf("telnet refused a point: %q", got)
				}
			}
			d.putJSON(t, []map[string]any{{"metric": "tr.m", "timestamp": ts + 60, "value": 2, "tags": map[string]string{"host": "b"}}})
			code, body := d.Get(t, "/api/search/lookup?m=tr.m")
			if code != 200 || strings.Contains(body, "_aggregate") || !strings.Contains(body, `"host":"a"`) || !strings.Contains(body, `"host":"b"`) {
				t.Errorf("raw puts: lookup %d %s, want host=a and host=b without _aggregate", code, body)
			}
			code, body = d.Get(t, "/api/search/lookup?m=tr.r")
			if tagged := strings.Contains(body, `"_aggregate":"RAW"`); code != 200 || tagged != tagRaw {
				t.Errorf("rollup point: lookup %d %s, want _aggregate=RAW %v", code, body, tagRaw)
			}
		})
	}
}
