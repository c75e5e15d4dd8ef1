package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestDaemonMetaEndpoints runs the real daemon: points written through
// /api/put show up in suggest, lookup, /api/stats and /metrics, and
// /api/config lists the settings it runs with.
func TestDaemonMetaEndpoints(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	base := "http://" + d.Addr
	pts := `[{"metric":"m.a","timestamp":1700000000,"value":1,"tags":{"host":"h1"}},` +
		`{"metric":"m.a","timestamp":1700000001,"value":2,"tags":{"host":"h1"}},` +
		`{"metric":"m.a","timestamp":1700000000,"value":3,"tags":{"host":"h2"}},` +
		`{"metric":"m.b","timestamp":1700000000,"value":4,"tags":{"dc":"x"}}]`
	if resp, body := post(t, "POST", base+"/api/put", []byte(pts), false); resp.StatusCode != 204 {
		t.Fatalf("put = %d %s", resp.StatusCode, body)
	}
	var sugg []string
	if code, body := d.Get(t, "/api/suggest?type=metrics&q="); code != 200 || json.Unmarshal([]byte(body), &sugg) != nil ||
		!slices.Equal(sugg, []string{"m.a", "m.b"}) {
		t.Errorf("suggest = %d %s", code, body)
	}
	var look struct{ TotalResults int }
	if code, body := d.Get(t, "/api/search/lookup?m=m.a{host=*}"); code != 200 || json.Unmarshal([]byte(body), &look) != nil ||
		look.TotalResults != 2 {
		t.Errorf("lookup = %d %s", code, body)
	}
	var stats []struct {
		Metric, Value string
		Tags          map[string]string
	}
	code, body := d.Get(t, "/api/stats")
	if code != 200 || json.Unmarshal([]byte(body), &stats) != nil {
		t.Fatalf("stats = %d %s", code, body)
	}
	find := func(metric, tagk, tagv string) string {
		for _, s := range stats {
			if s.Metric == metric && (tagk == "" || s.Tags[tagk] == tagv) && s.Tags["host"] != "" {
				return s.Value
			}
		}
		return "missing"
	}
	// 3 series, 4 points, all through /api/put; 2 metrics assigned.
	for _, c := range [][4]string{{"tsd.head.series", "", "", "3"}, {"tsd.index.series", "", "", "3"},
		{"tsd.ingest.points", "protocol", "put", "4"}, {"tsd.uid.assigned", "kind", "metrics", "2"}} {
		if got := find(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("%s{%s=%s} = %s, want %s", c[0], c[1], c[2], got, c[3])
		}
	}
	code, body = d.Get(t, "/metrics")
	for _, want := range []string{"# TYPE tsd_head_series gauge\ntsd_head_series 3\n",
		"tsd_ingest_points_total{protocol=\"put\"} 4\n", "tsd_uid_assigned_total{kind=\"tagk\"} 2\n"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	var cfg map[string]string
	if code, body := d.Get(t, "/api/config"); code != 200 || json.Unmarshal([]byte(body), &cfg) != nil ||
		cfg["tsd.storage.directory"] != data || cfg["tsd.network.bind"] != "127.0.0.1" || cfg["tsd.storage.salt.buckets"] != "20" {
		t.Errorf("config = %d %s", code, body)
	}
}
