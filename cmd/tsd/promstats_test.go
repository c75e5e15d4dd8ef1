package main

import (
	"net/url"
	"strings"
	"testing"
)

// TestDaemonPromQLStatsCountsWindowSamples: with the stats parameter the
// Prometheus API reports the samples in the range function's windows, as
// Prometheus does, not one per window (tsd's range-function pushdown is
// off for such queries); the value is the same either way.
func TestDaemonPromQLStatsCountsWindowSamples(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	put := `[{"metric":"s.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}},` +
		`{"metric":"s.m","timestamp":1356998415,"value":7,"tags":{"host":"a"}},` +
		`{"metric":"s.m","timestamp":1356998430,"value":3,"tags":{"host":"a"}},` +
		`{"metric":"s.m","timestamp":1356998445,"value":2,"tags":{"host":"a"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	q := "/api/v1/query?time=1356998450&query=" + url.QueryEscape(`max_over_time({__name__="s.m"}[1m])`)
	want := `"result":[{"metric":{"host":"a"},"value":[1356998450,"7"]}]`
	if code, body := d.Get(t, q); code != 200 || !strings.Contains(body, want) {
		t.Fatalf("query = %d %s, want %s", code, body, want)
	}
	code, body := d.Get(t, q+"&stats=1")
	if code != 200 || !strings.Contains(body, want) || !strings.Contains(body, `"totalQueryableSamples":4,`) {
		t.Fatalf("query with stats = %d %s, want %s and 4 queryable samples", code, body, want)
	}
}
