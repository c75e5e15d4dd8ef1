package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// putDevops writes TSBS-devops-like cpu series: cpu_usage_user and
// cpu_usage_system of host_0..host_2 every 10 s for 10 minutes, and
// mem_used of host_0.
func putDevops(t *testing.T, d *daemon) {
	t.Helper()
	var pts []string
	for h := range 3 {
		for m, name := range []string{"cpu_usage_user", "cpu_usage_system"} {
			for i := range 60 {
				pts = append(pts, fmt.Sprintf(`{"metric":%q,"timestamp":%d,"value":%d,"tags":{"hostname":"host_%d"}}`,
					name, 1356998400+10*i, (i*7+h*13+m*29)%100, h))
			}
		}
	}
	pts = append(pts, `{"metric":"mem_used","timestamp":1356998400,"value":1,"tags":{"hostname":"host_0"}}`)
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte("["+strings.Join(pts, ",")+"]"), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
}

// TestDaemonPromQLSettings: tsd.query.promql.* reach the engine and the
// parser, and /api/v1/status/flags, runtimeinfo and tsdb answer in
// Prometheus's shapes.
func TestDaemonPromQLSettings(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.query.promql.lookback_delta=1m", "--tsd.query.promql.max_samples=100",
		"--tsd.query.timeout=30000", "--tsd.query.promql.features=promql-delayed-name-removal,promql-experimental-functions")
	putDevops(t, d)
	renamed := `max by (name) (label_replace(max_over_time({__name__=~"cpu_(usage_user|usage_system)", hostname="host_1"}[1m]), "name", "$1", "__name__", "(.+)"))`
	for _, c := range []struct{ query, want string }{
		// Delayed name removal: label_replace still sees __name__.
		{renamed, `{"metric":{"name":"cpu_usage_system"},"value":[1356998700,"52"]}`},
		// An experimental function parses.
		{`sort_by_label(cpu_usage_user, "hostname")`, `"result":[{"metric":{"__name__":"cpu_usage_user","hostname":"host_0"}`},
		// lookback_delta 1m: the last point, at 1356998990, is out of view 70 s later.
		{`mem_used`, `"result":[]`},
	} {
		path := "/api/v1/query?time=1356998700&query=" + url.QueryEscape(c.query)
		if c.query == "mem_used" {
			path = "/api/v1/query?time=1356998470&query=mem_used"
		}
		if code, body := d.Get(t, path); code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("%s = %d %s\nwant %s", c.query, code, body, c.want)
		}
	}
	// max_samples 100: a range query holding 6 series x 61 steps is refused.
	code, body := d.Get(t, "/api/v1/query_range?start=1356998400&end=1356999000&step=10&query="+url.QueryEscape(`{__name__=~"cpu.*"}`))
	if code != 422 || !strings.Contains(body, `"errorType":"execution"`) || !strings.Contains(body, "query processing would load too many samples into memory") {
		t.Errorf("over max_samples = %d %s, want 422 execution", code, body)
	}
	want := `{"status":"success","data":{"enable-feature":"promql-delayed-name-removal,promql-experimental-functions",` +
		`"query.lookback-delta":"1m","query.max-samples":"100","query.timeout":"30s","storage.tsdb.retention.time":""}}`
	if code, body := d.Get(t, "/api/v1/status/flags"); code != 200 || body != want {
		t.Errorf("flags = %d %s\nwant %s", code, body, want)
	}
	var ri struct {
		Status string         `json:"status"`
		Data   map[string]any `json:"data"`
	}
	code, body = d.Get(t, "/prometheus/api/v1/status/runtimeinfo")
	if err := json.Unmarshal([]byte(body), &ri); code != 200 || err != nil || ri.Status != "success" {
		t.Fatalf("runtimeinfo = %d %s (%v)", code, body, err)
	}
	for _, k := range []string{"startTime", "CWD", "hostname", "serverTime", "reloadConfigSuccess", "lastConfigTime",
		"corruptionCount", "goroutineCount", "GOMAXPROCS", "GOMEMLIMIT", "GOGC", "GODEBUG", "storageRetention"} {
		if _, ok := ri.Data[k]; !ok {
			t.Errorf("runtimeinfo lacks %s: %s", k, body)
		}
	}
	if n, _ := ri.Data["goroutineCount"].(float64); n < 1 {
		t.Errorf("runtimeinfo goroutineCount = %v", ri.Data["goroutineCount"])
	}
	// Prometheus's serveTSDBStatus and MemPostings.Stats over the 7
	// series: headStats from the head (7 rows of one hour, the points'
	// first and last ms), the lists top 3 (ties by name), numLabelPairs 6
	// (3 metric names, 3 hostnames), bytes per label name the encoded
	// sizes of each pair times its series: __name__ (9+15)*3 + (9+17)*3 +
	// (9+9)*1 = 168, hostname (9+7)*(3+2+2) = 112.
	want = `{"status":"success","data":{"headStats":{"numSeries":7,"numLabelPairs":6,"chunkCount":7,"minTime":1356998400000,"maxTime":1356998990000},` +
		`"seriesCountByMetricName":[{"name":"cpu_usage_system","value":3},{"name":"cpu_usage_user","value":3},{"name":"mem_used","value":1}],` +
		`"labelValueCountByLabelName":[{"name":"__name__","value":3},{"name":"hostname","value":3}],` +
		`"memoryInBytesByLabelName":[{"name":"__name__","value":168},{"name":"hostname","value":112}],` +
		`"seriesCountByLabelValuePair":[{"name":"__name__=cpu_usage_system","value":3},{"name":"__name__=cpu_usage_user","value":3},{"name":"hostname=host_0","value":3}]}}`
	if code, body := d.Get(t, "/api/v1/status/tsdb?limit=3"); code != 200 || body != want {
		t.Errorf("tsdb = %d %s\nwant %s", code, body, want)
	}
	if code, body := d.Get(t, "/api/v1/status/tsdb?limit=0"); code != 400 || !strings.Contains(body, `"error":"limit must be a positive number"`) {
		t.Errorf("tsdb limit=0 = %d %s", code, body)
	}
}

// TestDaemonPromQLDefaults: Prometheus's defaults, features off (an
// experimental function does not parse), and an unknown feature refused
// at start naming the key.
func TestDaemonPromQLDefaults(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	want := `{"status":"success","data":{"enable-feature":"","query.lookback-delta":"5m","query.max-samples":"50000000",` +
		`"query.timeout":"2m","storage.tsdb.retention.time":""}}`
	if code, body := d.Get(t, "/api/v1/status/flags"); code != 200 || body != want {
		t.Errorf("flags = %d %s\nwant %s", code, body, want)
	}
	if code, body := d.Get(t, "/api/v1/query?time=1356998700&query="+url.QueryEscape(`sort_by_label(up, "job")`)); code != 400 ||
		!strings.Contains(body, `function \"sort_by_label\" is not enabled`) {
		t.Errorf("experimental function without the feature = %d %s", code, body)
	}
	out, code := runTSD(t, "--tsd.query.promql.features=promql-nope")
	if code != exitUsage || !strings.Contains(out, `tsd.query.promql.features = "promql-nope": unknown PromQL feature "promql-nope"`) {
		t.Errorf("unknown feature: exit %d\n%s", code, out)
	}
}

// TestDaemonKeepGroupedNames: TSBS's query for each metric's maximum,
// grouped by __name__ over max_over_time, gets one series per metric by
// default (tsd.query.promql.keep_grouped_names) and Prometheus's
// same-labelset error with the key false.
func TestDaemonKeepGroupedNames(t *testing.T) {
	path := "/api/v1/query?time=1356998700&query=" +
		url.QueryEscape(`max(max_over_time({__name__=~"cpu_(usage_user|usage_system)", hostname="host_1"}[1m])) by (__name__)`)
	d := startDaemon(t, "--data", t.TempDir())
	putDevops(t, d)
	code, body := d.Get(t, path)
	for _, want := range []string{`{"metric":{"__name__":"cpu_usage_user"},"value":[1356998700,"95"]}`,
		`{"metric":{"__name__":"cpu_usage_system"},"value":[1356998700,"52"]}`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("by default = %d %s\nwant %s", code, body, want)
		}
	}
	d = startDaemon(t, "--data", t.TempDir(), "--tsd.query.promql.keep_grouped_names=false")
	putDevops(t, d)
	if code, body := d.Get(t, path); code != 422 || !strings.Contains(body, "vector cannot contain metrics with the same labelset") {
		t.Errorf("keep_grouped_names=false = %d %s, want 422", code, body)
	}
}
