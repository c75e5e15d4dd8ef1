package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDaemonRowCache checks the query reader's row cache through the
// daemon: a stored row queried again is served from the cache (with the
// same answer), /api/stats counts it, and /api/dropcaches empties it.
func TestDaemonRowCache(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	put := `[{"metric":"c.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}},` +
		`{"metric":"c.m","timestamp":1356998460,"value":2.5,"tags":{"host":"a"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	if err := d.Stop(t); err != nil { // the final flush stores the row
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	// Entries from the heap: the first read admits the row into the
	// empty cache, not a later read after the reserve's filler has made
	// room (read's TestReserveCarves covers the reserve).
	d = startDaemon(t, "--data", data, "--tsd.query.row_cache.reserve=-1")
	path := "/api/query?start=1356998400&end=1356998460&m=sum:c.m"
	want := `[{"metric":"c.m","tags":{"host":"a"},"aggregateTags":[],"dps":{"1356998400":1.0,"1356998460":2.5}}]`
	query := func(round string) {
		t.Helper()
		if code, body := d.Get(t, path); code != 200 || body != want {
			t.Fatalf("%s: %d %s, want %s", round, code, body, want)
		}
	}
	stat := func(metric string) string {
		t.Helper()
		var stats []struct{ Metric, Value string }
		code, body := d.Get(t, "/api/stats")
		if code != 200 || json.Unmarshal([]byte(body), &stats) != nil {
			t.Fatalf("stats = %d %s", code, body)
		}
		for _, s := range stats {
			if s.Metric == metric {
				return s.Value
			}
		}
		return "missing"
	}
	for _, round := range []string{"first (admitted)", "second (cached)", "third (cached)"} {
		query(round)
	}
	if hits, rows := stat("tsd.query.rowcache.hits"), stat("tsd.query.rowcache.rows"); hits != "2" || rows != "1" {
		t.Fatalf("after three queries: rowcache hits %s rows %s, want 2 and 1", hits, rows)
	}
	if resp, body := post(t, "DELETE", "http://"+d.Addr+"/api/dropcaches", nil, false); resp.StatusCode != 200 {
		t.Fatalf("dropcaches = %d %s", resp.StatusCode, body)
	}
	if rows := stat("tsd.query.rowcache.rows"); rows != "0" {
		t.Fatalf("after /api/dropcaches: rowcache rows %s, want 0", rows)
	}
	query("after dropcaches")
}

// TestDaemonFillsReserve: a daemon that serves queries fills the row
// cache's reserve as it starts, so the first query of a stored row
// caches it (a later identical query is a hit); tsd.mode=wo keeps none.
func TestDaemonFillsReserve(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	put := `[{"metric":"c.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	if err := d.Stop(t); err != nil { // the final flush stores the row
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = startDaemon(t, "--data", data, "--tsd.query.row_cache.reserve=2MiB")
	const want = 2 * ((1 << 20) / 24 * 24) // two blocks of a MiB's worth of points
	deadline := time.Now().Add(20 * time.Second)
	for d.stat(t, "tsd.query.rowcache.reserve") < want {
		if time.Now().After(deadline) {
			t.Fatalf("reserve %d bytes 20 s after the start, want %d", d.stat(t, "tsd.query.rowcache.reserve"), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	path := "/api/query?start=1356998400&end=1356998460&m=sum:c.m"
	for range 2 {
		if code, body := d.Get(t, path); code != 200 || !strings.Contains(body, `"1356998400":1`) {
			t.Fatalf("query = %d %s", code, body)
		}
	}
	if rows, hits := d.stat(t, "tsd.query.rowcache.rows"), d.stat(t, "tsd.query.rowcache.hits"); rows != 1 || hits != 1 {
		t.Fatalf("after two queries: rowcache rows %d hits %d, want 1 and 1 (the first query caches the row)", rows, hits)
	}

	wo := startDaemon(t, "--data", t.TempDir(), "--tsd.mode=wo", "--tsd.query.row_cache.reserve=2MiB")
	time.Sleep(300 * time.Millisecond)
	code, body := wo.Get(t, "/metrics")
	if code != 200 {
		t.Fatalf("wo /metrics = %d %.200s", code, body)
	}
	if !strings.Contains(body, "\ntsd_query_rowcache_reserve 0\n") {
		i := strings.Index(body, "tsd_query_rowcache_reserve")
		t.Fatalf("wo: /metrics has no tsd_query_rowcache_reserve of 0: %.120s", body[max(i, 0):])
	}
}

// TestDaemonFlushKeepsDecodedRows: a head row the daemon's queries read is
// still cached once /api/compact flushes it (the flusher hands it to the
// query reader), so the next query of the stored row is a hit with the
// same answer.
func TestDaemonFlushKeepsDecodedRows(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.query.row_cache.reserve=-1")
	put := `[{"metric":"c.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}},` +
		`{"metric":"c.m","timestamp":1356998460,"value":2.5,"tags":{"host":"a"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	path := "/api/query?start=1356998400&end=1356998460&m=sum:c.m"
	want := `[{"metric":"c.m","tags":{"host":"a"},"aggregateTags":[],"dps":{"1356998400":1.0,"1356998460":2.5}}]`
	if code, body := d.Get(t, path); code != 200 || body != want {
		t.Fatalf("from the head: %d %s, want %s", code, body, want)
	}
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/compact", nil, false); resp.StatusCode != 200 {
		t.Fatalf("/api/compact = %d %s", resp.StatusCode, body)
	}
	misses := d.stat(t, "tsd.query.rowcache.misses")
	if code, body := d.Get(t, path); code != 200 || body != want {
		t.Fatalf("from the store: %d %s, want %s", code, body, want)
	}
	if moved := d.stat(t, "tsd.query.rowcache.moved"); moved != 1 {
		t.Fatalf("rowcache moved %d, want the row handed on", moved)
	}
	if m := d.stat(t, "tsd.query.rowcache.misses"); m != misses {
		t.Fatalf("rowcache misses %d -> %d: the stored row was decoded again", misses, m)
	}
}
