package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// tsMetaOf reads the TSMeta of series tsm{host=a} through the real
// daemon's /api/uid/tsmeta?m= (a list, OpenTSDB's formatTSMetaListV1).
func (d *daemon) tsMetaOf(t *testing.T) map[string]any {
	t.Helper()
	code, body := d.Get(t, "/api/uid/tsmeta?m=tsm%7Bhost=a%7D")
	var list []map[string]any
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list) != 1 {
		t.Fatalf("GET tsmeta = %d %s (%v)", code, body, err)
	}
	return list[0]
}

// TestDaemonTSMeta: through the real binary, on both engines, with and
// without tsd.core.meta.enable_tsuid_incrementing (and enable_realtime_uid): every written series has
// a TSMeta (docs api_http/uid/tsmeta shapes), the user's fields and the
// counters (kept per flushed row, written here by the shutdown flush)
// survive a restart, and the searches find the series.
func TestDaemonTSMeta(t *testing.T) {
	t.Parallel() // its own daemon
	for _, engine := range []string{"pebble", "bigtable"} {
		for _, track := range []bool{false, true} {
			name := engine + "/untracked"
			if track {
				name = engine + "/incrementing"
			}
			t.Run(name, func(t *testing.T) { testDaemonTSMeta(t, engine, track) })
		}
	}
}

func testDaemonTSMeta(t *testing.T, engine string, track bool) {
	dir := t.TempDir()
	args := []string{"--data=" + dir}
	run := startDaemon
	if engine == "bigtable" {
		run = startBTEmulator(t).start
		args = append(args, btFlags...)
	}
	if track {
		args = append(args, "--tsd.core.meta.enable_tsuid_incrementing=true", "--tsd.core.meta.enable_realtime_uid=true")
	}
	start := time.Now().Unix()
	d := run(t, args...)
	var pts []map[string]any
	for i := range 3 {
		pts = append(pts, map[string]any{"metric": "tsm", "timestamp": 1700000000 + 10*i, "value": i, "tags": map[string]string{"host": "a"}})
	}
	d.putJSON(t, pts)
	m := d.tsMetaOf(t)
	if m["totalDatapoints"] != 0.0 || m["lastReceived"] != 0.0 || m["max"] != "NaN" {
		t.Errorf("before any flush: %v", m)
	}
	tsuid := m["tsuid"].(string)
	resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/uid/tsmeta", []byte(`{"tsuid":"`+tsuid+`","description":"kept","units":"ms"}`), false)
	if resp.StatusCode != 200 || !strings.Contains(out, `"description":"kept"`) {
		t.Fatalf("POST tsmeta = %d %s", resp.StatusCode, out)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = run(t, args...)
	m = d.tsMetaOf(t)
	if m["description"] != "kept" || m["units"] != "ms" {
		t.Errorf("user fields after restart: %v", m)
	}
	total, last, created := m["totalDatapoints"].(float64), int64(m["lastReceived"].(float64)), int64(m["created"].(float64))
	now := time.Now().Unix()
	switch {
	case !track && (total != 0 || last != 0 || created != 0):
		t.Errorf("untracked series has counters: %v", m)
	case track && (total != 3 || last < start || last > now || created < start || created > now):
		t.Errorf("tracked after restart: total %v, lastReceived %d, created %d, want 3 and within [%d, %d]", total, last, created, start, now)
	}
	// enable_realtime_uid: the metric's UIDMeta has its assignment time.
	if mc := int64(m["metric"].(map[string]any)["created"].(float64)); (track && (mc < start || mc > now)) || (!track && mc != 0) {
		t.Errorf("metric UIDMeta created %d (realtime_uid %v), want within [%d, %d] or 0", mc, track, start, now)
	}
	code, body := d.Get(t, "/api/search/tsuids?query=ts*%7Bhost=*%7D")
	if code != 200 || !strings.Contains(body, `"results":["`+tsuid+`"],"startIndex":0,"totalResults":1}`) {
		t.Errorf("search tsuids = %d %s", code, body)
	}
	code, body = d.Get(t, "/api/search/tsmeta_summary?query=tsm")
	if code != 200 || !strings.Contains(body, `"results":[{"tags":{"host":"a"},"metric":"tsm","tsuid":"`+tsuid+`"}]`) {
		t.Errorf("search tsmeta_summary = %d %s", code, body)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
}
