package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/internal/du"
)

// allocatedBytes returns the disk blocks allocated to the files under
// dir (du.Allocated).
func allocatedBytes(t *testing.T, dir string) int64 {
	t.Helper()
	n, err := du.Allocated(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCompactCommand runs `tsd compact --url` against a daemon holding
// points in its head (it flushes them: the count comes back), refuses GET
// on the route, then stops the daemon and compares the disk it left with
// the same store after `tsd compact --data`: a clean stop leaves at most
// 1.2× the settled blocks (pebble's preallocated logs stayed allocated
// before).
func TestCompactCommand(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	now := time.Now().Unix()
	var pts []map[string]any
	for i := range 200 {
		pts = append(pts, map[string]any{"metric": "cmp.m", "timestamp": now - 3600 + int64(i),
			"value": i, "tags": map[string]string{"host": fmt.Sprintf("h%d", i%4)}})
	}
	d.putJSON(t, pts)
	if code, body := d.Get(t, "/api/compact"); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /api/compact = %d %s, want 405", code, body)
	}
	out, code := runTSD(t, "compact", "--url", "http://"+d.Addr)
	if code != 0 || !strings.Contains(out, "(200 points) flushed") {
		t.Fatalf("tsd compact --url: exit %d\n%s\n%s", code, out, d.Logs)
	}
	out, code = runTSD(t, "compact", "--url", "http://"+d.Addr)
	if code != 0 || !strings.Contains(out, "compacted: 0 rows (0 points) flushed") {
		t.Fatalf("second tsd compact --url: exit %d\n%s", code, out)
	}
	if out, code := runTSD(t, "compact", "--url", "http://"+d.Addr, "--data", data); code != exitUsage {
		t.Fatalf("tsd compact --url --data: exit %d, want %d\n%s", code, exitUsage, out)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	stopped := allocatedBytes(t, data)
	out, code = runTSD(t, "compact", "--data", data)
	if code != 0 || !strings.Contains(out, "compacted "+data) {
		t.Fatalf("tsd compact --data: exit %d\n%s", code, out)
	}
	settled := allocatedBytes(t, data)
	t.Logf("allocated after a clean stop %d bytes, settled %d bytes", stopped, settled)
	if float64(stopped) > 1.2*float64(settled) {
		t.Fatalf("a clean stop leaves %d bytes allocated, %.1f× the settled %d (at most 1.2×)",
			stopped, float64(stopped)/float64(settled), settled)
	}
}
