package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	logDmgMetrics = 40
	logDmgHosts   = 4
	logDmgHours   = 4
)

// TestDaemonDamagedStoreLog SIGKILLs a daemon whose flushed rows, UIDs and
// index entries are in pebble's log (its memtable was not flushed), flips
// one byte in the middle of that log, and starts the daemon again. It
// starts and serves: the log is salvaged (ERROR line, the original kept as
// .damaged, both /metrics counters at 1), points answer with the values
// they were given (here tsd's own log, whose current segment stays, holds
// them all again), and new writes land.
func TestDaemonDamagedStoreLog(t *testing.T) {
	t.Parallel() // waits for the background flusher
	data := t.TempDir()
	t0 := time.Now().Add(-48 * time.Hour).Truncate(time.Hour).Unix()
	d := startDaemon(t, "--data", data, "--tsd.storage.flush.grace=1s")
	total := logDmgLoad(t, d, logDmgMetrics, t0)
	eventually(t, "every point flushed to the store", func() bool {
		return metricValue(t, d, "tsd_flush_points_total") >= float64(total)
	})
	d.Kill()

	log := largestStoreLog(t, data)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 96<<10 {
		t.Fatalf("pebble log %s holds %d bytes: too little to damage its middle", log, len(b))
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}

	d = startDaemon(t, "--data", data, "--tsd.storage.flush.grace=1s")
	if !strings.Contains(d.Logs.String(), "pebble log damaged") {
		t.Errorf("no ERROR line about the damaged log:\n%s", d.Logs)
	}
	if kept, err := os.ReadFile(log + ".damaged"); err != nil || string(kept) != string(b) {
		t.Errorf("the damaged log is not kept as %s.damaged (%v)", filepath.Base(log), err)
	}
	for _, line := range []string{"tsd_storage_salvaged_logs_total", "tsd_storage_log_damaged_blocks_total"} {
		if v := metricValue(t, d, line); v != 1 {
			t.Errorf("%s = %v, want 1", line, v)
		}
	}
	found := 0
	for m := range logDmgMetrics {
		found += logDmgPoints(t, d, m, t0)
	}
	t.Logf("%d of %d points answer after the salvage", found, total)
	if found < total/2 {
		t.Errorf("%d of %d points answer after the salvage; a damaged block costs far fewer", found, total)
	}
	d.putJSON(t, []map[string]any{{"metric": "after.salvage", "timestamp": t0, "value": 7, "tags": map[string]string{"k": "h0"}}})
	if got := d.queryDPS(t, "sum:after.salvage", t0, t0+60); len(got["h0"]) != 1 {
		t.Errorf("a point put after the salvage reads %v", got)
	}
}

// logDmgLoad puts a point a minute for logDmgHours hours from t0, of
// logDmgHosts hosts and the first metrics metrics, and returns how many.
func logDmgLoad(t *testing.T, d *daemon, metrics int, t0 int64) int {
	t.Helper()
	total := 0
	for m := range metrics {
		var pts []map[string]any
		for h := range logDmgHosts {
			for i := range logDmgHours * 60 {
				pts = append(pts, map[string]any{"metric": logDmgMetric(m), "timestamp": t0 + int64(i)*60,
					"value": logDmgValue(m, h, i), "tags": map[string]string{"k": "h" + strconv.Itoa(h)}})
			}
		}
		d.putJSON(t, pts)
		total += len(pts)
	}
	return total
}

func logDmgMetric(m int) string { return fmt.Sprintf("logdmg.m%02d", m) }

func logDmgValue(m, h, i int) float64 { return float64(m*100000 + h*10000 + i) }

// logDmgPoints counts the points of metric m that answer, failing on any
// value the daemon was not given. A metric whose name was lost with the
// damaged records answers 400 and counts none.
func logDmgPoints(t *testing.T, d *daemon, m int, t0 int64) int {
	t.Helper()
	code, body := d.Get(t, fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:%s{k=*}", t0, t0+logDmgHours*3600, logDmgMetric(m)))
	if code == 400 && strings.Contains(body, "No such name") {
		return 0
	}
	if code != 200 {
		t.Fatalf("query %s: %d %.300s", logDmgMetric(m), code, body)
	}
	var res []struct {
		Tags map[string]string  `json:"tags"`
		DPS  map[string]float64 `json:"dps"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("query %s: %v", logDmgMetric(m), err)
	}
	n := 0
	for _, r := range res {
		h, _ := strconv.Atoi(strings.TrimPrefix(r.Tags["k"], "h"))
		for ts, v := range r.DPS {
			sec, _ := strconv.ParseInt(ts, 10, 64)
			if want := logDmgValue(m, h, int(sec-t0)/60); v != want {
				t.Errorf("%s k=%s at %s = %v, want %v", logDmgMetric(m), r.Tags["k"], ts, v, want)
			}
			n++
		}
	}
	return n
}

// largestStoreLog returns pebble's largest log file in the data directory.
func largestStoreLog(t *testing.T, data string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(data, "*.log"))
	best, size := "", int64(-1)
	for _, l := range logs {
		if fi, err := os.Stat(l); err == nil && fi.Size() > size {
			best, size = l, fi.Size()
		}
	}
	if best == "" {
		t.Fatalf("no pebble log in %s", data)
	}
	return best
}

// TestDaemonDamagedManifest stops a daemon cleanly, flips one byte in the
// middle of its store's MANIFEST and starts it again: the MANIFEST is
// mended from its copy (ERROR line, the original kept, the counter at 1)
// and every point answers. Pebble alone would have opened the store
// without the sstables the MANIFEST lists after the damage, and deleted
// them.
func TestDaemonDamagedManifest(t *testing.T) {
	data := t.TempDir()
	t0 := time.Now().Add(-48 * time.Hour).Truncate(time.Hour).Unix()
	d := startDaemon(t, "--data", data)
	total := logDmgLoad(t, d, 8, t0)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	manifests, _ := filepath.Glob(filepath.Join(data, "MANIFEST-*"))
	if len(manifests) != 1 {
		t.Fatalf("manifests %v, want one", manifests)
	}
	b, err := os.ReadFile(manifests[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(manifests[0], b, 0o644); err != nil {
		t.Fatal(err)
	}

	d = startDaemon(t, "--data", data)
	if !strings.Contains(d.Logs.String(), "pebble manifest damaged: mended from its copy") {
		t.Errorf("no ERROR line about the damaged MANIFEST:\n%s", d.Logs)
	}
	if kept, err := os.ReadFile(manifests[0] + ".damaged"); err != nil || string(kept) != string(b) {
		t.Errorf("the damaged MANIFEST is not kept as %s.damaged (%v)", filepath.Base(manifests[0]), err)
	}
	if v := metricValue(t, d, "tsd_storage_restored_manifests_total"); v != 1 {
		t.Errorf("tsd_storage_restored_manifests_total = %v, want 1", v)
	}
	found := 0
	for m := range 8 {
		found += logDmgPoints(t, d, m, t0)
	}
	if found != total {
		t.Errorf("%d of %d points answer after the MANIFEST was mended", found, total)
	}
}
