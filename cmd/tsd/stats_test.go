package main

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestDaemonStatsOneList: telnet's stats and /api/stats answer the same
// list (names and tags; the values move between two requests), under
// OpenTSDB's names where OpenTSDB has one (StatsRpc, ConnectionManager,
// RpcHandler, PutDataPointRpc, TSDB.collectStats, CompactionQueue).
func TestDaemonStatsOneList(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	pts := `[{"metric":"s.a","timestamp":1700000000,"value":1,"tags":{"host":"h1"}},` +
		`{"metric":"s.b","timestamp":1700000000,"value":2,"tags":{"host":"h1"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(pts), false); resp.StatusCode != 204 {
		t.Fatalf("put = %d %s", resp.StatusCode, body)
	}
	telnetSession(t, d.Addr, "put s.a 1700000001 3 host=h1", "put s.a 1700000002 x host=h1") // and version
	lines := telnetSession(t, d.Addr, "stats")
	var telnet []string
	values := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 4 || !strings.HasPrefix(f[0], "tsd.") {
			continue
		}
		if !strings.HasPrefix(f[len(f)-1], "host=") {
			t.Errorf("telnet stat without its host tag last: %q", l)
		}
		key := strings.TrimSpace(f[0] + " " + strings.Join(f[3:len(f)-1], " "))
		telnet = append(telnet, key)
		values[key] = f[2]
	}
	code, body := d.Get(t, "/api/stats")
	var stats []struct {
		Metric, Value string
		Tags          map[string]string
	}
	if code != 200 || json.Unmarshal([]byte(body), &stats) != nil {
		t.Fatalf("stats = %d %s", code, body)
	}
	var http []string
	for _, s := range stats {
		var tags []string
		for k, v := range s.Tags {
			if k != "host" {
				tags = append(tags, k+"="+v)
			}
		}
		sort.Strings(tags)
		http = append(http, strings.TrimSpace(s.Metric+" "+strings.Join(tags, " ")))
	}
	sort.Strings(http)
	sort.Strings(telnet)
	if len(telnet) < 50 || !slices.Equal(telnet, http) {
		t.Errorf("telnet stats (%d):\n%s\n/api/stats (%d):\n%s", len(telnet), strings.Join(telnet, "\n"), len(http), strings.Join(http, "\n"))
	}
	for key, want := range map[string]string{
		"tsd.datapoints.added type=all":             "3",
		"tsd.rpc.received type=put":                 "2",
		"tsd.rpc.errors type=invalid_values":        "1", // the x
		"tsd.rpc.errors type=illegal_arguments":     "0",
		"tsd.uid.ids-used kind=metrics":             "2",
		"tsd.uid.ids-available kind=metrics":        "16777213",
		"tsd.uid.ids-used kind=tagk":                "1",
		"tsd.connectionmgr.connections type=open":   "*", // this one, and HTTP's kept alive
		"tsd.rpc.received type=telnet":              "4", // stats is counted before it answers
		"tsd.head.memory-bytes":                     "*",
		"tsd.http.latency_95pct type=all":           "*",
		"tsd.connectionmgr.connections type=total":  "*",
		"tsd.compaction.queue.size":                 "*",
		"tsd.compaction.errors":                     "0",
		"tsd.compaction.duplicates type=identical":  "0",
		"tsd.compaction.duplicates type=variant":    "0",
		"tsd.connectionmgr.exceptions type=reset":   "*",
		"tsd.connectionmgr.exceptions type=closed":  "*",
		"tsd.connectionmgr.exceptions type=unknown": "*",
	} {
		got, ok := values[key]
		if !ok || want != "*" && got != want {
			t.Errorf("telnet stats %s = %q (present %v), want %s", key, got, ok, want)
		}
	}
}

// TestDaemonStatsRPCErrors: tsd.rpc.errors counts refused points by
// OpenTSDB's types (PutDataPointRpc: a NumberFormatException is
// invalid_values, NoSuchUniqueName unknown_metrics, any other
// IllegalArgumentException illegal_arguments), over telnet and /api/put,
// with auto-creation of metrics off.
func TestDaemonStatsRPCErrors(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.core.auto_create_metrics=false")
	replies := telnetSession(t, d.Addr,
		"put e.new 1700000000 x host=h1",   // invalid value, found before the name
		"put e.new! 1700000000 1 host=h1",  // illegal metric name
		"put e.new 1700000000 1 host=h1",   // unknown metric
		"put e.new 1700000000 1.5 host=h1") // unknown metric
	if len(replies) < 4 || !strings.HasPrefix(replies[0], "put: invalid value:") || !strings.HasPrefix(replies[2], "put: unknown metric:") {
		t.Fatalf("telnet replies %q", replies)
	}
	body := `[{"metric":"e.new","timestamp":1700000000,"value":"abc","tags":{"host":"h1"}},` +
		`{"metric":"e.new","timestamp":1700000000,"value":2,"tags":{"host":"h1"}}]`
	if resp, b := post(t, "POST", "http://"+d.Addr+"/api/put", []byte(body), false); resp.StatusCode != 400 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, b)
	}
	code, out := d.Get(t, "/api/stats")
	var stats []struct {
		Metric, Value string
		Tags          map[string]string
	}
	if code != 200 || json.Unmarshal([]byte(out), &stats) != nil {
		t.Fatalf("stats = %d %s", code, out)
	}
	got := map[string]string{}
	for _, s := range stats {
		if s.Metric == "tsd.rpc.errors" {
			got[s.Tags["type"]] = s.Value
		}
	}
	want := map[string]string{"invalid_values": "2", "illegal_arguments": "1", "unknown_metrics": "3",
		"socket_writes_blocked": "0", "hbase_errors": "0"}
	if !maps.Equal(got, want) {
		t.Errorf("tsd.rpc.errors by type = %v, want %v", got, want)
	}
}

// TestDaemonStatsQuery: the real daemon lists a finished /api/query under
// /api/stats/query's "completed", in OpenTSDB's QueryStats shape
// (src/stats/QueryStats.java, getRunningAndCompleteStats), and nothing
// running once it is done.
func TestDaemonStatsQuery(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	pts := `[{"metric":"sq.a","timestamp":1700000000,"value":1,"tags":{"host":"h1"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(pts), false); resp.StatusCode != 204 {
		t.Fatalf("put = %d %s", resp.StatusCode, body)
	}
	if code, body := d.Get(t, "/api/query?start=1699999000&end=1700001000&m=sum:sq.a"); code != 200 {
		t.Fatalf("query = %d %s", code, body)
	}
	code, body := d.Get(t, "/api/stats/query")
	var got struct {
		Running   []json.RawMessage
		Completed []struct {
			Query struct {
				Start   string
				Queries []struct{ Metric string }
			}
			Exception    string
			Executed     int
			HTTPResponse struct{ Code int } `json:"httpResponse"`
			SentToClient bool
			Stats        map[string]float64
		}
	}
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Completed) != 1 || len(got.Running) != 0 {
		t.Fatalf("/api/stats/query = %d %s", code, body)
	}
	c := got.Completed[0]
	if c.Query.Start != "1699999000" || len(c.Query.Queries) != 1 || c.Query.Queries[0].Metric != "sq.a" ||
		c.Exception != "null" || c.Executed != 1 || c.HTTPResponse.Code != 200 || !c.SentToClient ||
		c.Stats["totalTime"] <= 0 {
		t.Errorf("/api/stats/query = %s", body)
	}
}
