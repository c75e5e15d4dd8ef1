package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// post sends body to path and returns the status and answer.
func (d *daemon) post(t *testing.T, path, ctype, body string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+d.Addr+path, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitLog polls the daemon's log for a line matching every pattern.
func (d *daemon) waitLog(t *testing.T, what string, patterns ...string) string {
	t.Helper()
	var line string
	eventually(t, what+" in the log", func() bool {
		for l := range strings.SplitSeq(d.Logs.String(), "\n") {
			ok := true
			for _, p := range patterns {
				if !strings.Contains(l, p) {
					ok = false
					break
				}
			}
			if ok {
				line = l
				return true
			}
		}
		return false
	})
	return line
}

// TestDaemonRefusedWritesLogged: /api/put's "Please see the TSD logs" is
// true: a bad point's error is in the log at WARN with the client,
// protocol and count, as are telnet's, Influx's and remote_write's
// refusals, and the 400 answer is logged at INFO with its route.
func TestDaemonRefusedWritesLogged(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	now := time.Now().Unix()
	body := fmt.Sprintf(`[{"metric":"good.m","timestamp":%d,"value":1,"tags":{"h":"a"}},`+
		`{"metric":"bad.m","timestamp":%d,"value":"not-a-number","tags":{"h":"a"}},`+
		`{"metric":"bad m","timestamp":%d,"value":2,"tags":{"h":"a"}}]`, now, now, now)
	code, ans := d.post(t, "/api/put", "application/json", body)
	if code != 400 || !strings.Contains(ans, "Please see the TSD logs") {
		t.Fatalf("bad put = %d %s", code, ans)
	}
	d.waitLog(t, "the refused put", `level=WARN`, `msg="points refused"`, `kind=ingest.refused.put`,
		`client=127.0.0.1`, `protocol=put`, `points=2`, `first_error="Unable to parse value to a number"`)
	d.waitLog(t, "the 400 answer", `level=INFO`, `msg="HTTP error answer"`, `route=/api/put`, `status=400`, `One or more data points had errors`)

	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "put tel.m %d notanumber h=a\nput tel.m %d 1 h=a\nversion\n", now, now)
	r := bufio.NewReader(c)
	if first, _ := r.ReadString('\n'); !strings.HasPrefix(first, "put: invalid value: For input string") {
		t.Fatalf("telnet answered %q", first)
	}
	d.waitLog(t, "the refused telnet put", `msg="points refused"`, `kind=ingest.refused.telnet`, `protocol=telnet`, `points=1`,
		`first_error="put: invalid value: For input string`)

	code, ans = d.post(t, "/write", "text/plain", "cpu,host=a value=1\ncpu,host=a value=bad\n")
	if code != 400 {
		t.Fatalf("influx = %d %s", code, ans)
	}
	d.waitLog(t, "the refused influx line", `msg="points refused"`, `protocol=influx`, `points=1`)
}

// parseExposition parses a whole /metrics answer with Prometheus's own
// parser, failing on any parse error or on a series (name and labels)
// written twice.
func parseExposition(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	seen := map[string]bool{}
	for l := range strings.SplitSeq(body, "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		series := l[:strings.LastIndexByte(l, ' ')]
		if seen[series] {
			t.Errorf("/metrics has %s twice", series)
		}
		seen[series] = true
	}
	names := map[string]int{}
	for l := range strings.SplitSeq(body, "\n") {
		if f, ok := strings.CutPrefix(l, "# TYPE "); ok {
			names[strings.Fields(f)[0]]++
		}
	}
	for n, c := range names {
		if c > 1 {
			t.Errorf("/metrics declares %s %d times", n, c)
		}
	}
	return fams
}

// TestDaemonMetricsExposition: /metrics is one exposition of tsd's own
// figures, Go's runtime and the process, and the request, ingest and
// query duration histograms by route, protocol and API; Prometheus's
// parser reads it whole and no series or family is there twice.
func TestDaemonMetricsExposition(t *testing.T) {
	t.Parallel() // its own daemon
	d := startDaemon(t, "--data", t.TempDir())
	now := time.Now().Unix()
	if code, ans := d.post(t, "/api/put", "application/json",
		fmt.Sprintf(`{"metric":"m.x","timestamp":%d,"value":1,"tags":{"h":"a"}}`, now)); code != 204 {
		t.Fatalf("put = %d %s", code, ans)
	}
	if code, ans := d.Get(t, "/api/query?start=1h-ago&m=sum:m.x"); code != 200 {
		t.Fatalf("query = %d %s", code, ans)
	}
	if code, ans := d.Get(t, "/api/v1/query?query=m_x"); code != 200 {
		t.Fatalf("promql = %d %s", code, ans)
	}
	if code, _ := d.Get(t, "/api/query/last?timeseries=m.x"); code != 200 {
		t.Fatalf("last = %d", code)
	}
	d.Get(t, "/no/such/path")
	_, body := d.Get(t, "/metrics")
	fams := parseExposition(t, body)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total",
		"process_resident_memory_bytes", "tsd_http_request_duration_seconds", "tsd_ingest_request_duration_seconds",
		"tsd_query_duration_seconds", "tsd_ingest_points_total", "tsd_head_series", "tsd_head_memory_bytes",
		"tsd_pebble_compaction_debt_bytes", "tsd_pebble_l0_files", "tsd_pebble_l0_sublevels",
		"tsd_pebble_write_stalled_seconds", "tsd_pebble_table_bytes", "tsd_pebble_disk_bytes",
		"tsd_flush_lag_seconds", "tsd_compaction_lag_seconds"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, want := range []string{
		`tsd_http_request_duration_seconds_count{code="204",route="/api/put"} 1`,
		`tsd_http_request_duration_seconds_count{code="200",route="/api/query"} 1`,
		`tsd_http_request_duration_seconds_count{code="200",route="/api/query/last"} 1`,
		`tsd_http_request_duration_seconds_count{code="404",route="unmatched"} 1`,
		`tsd_ingest_request_duration_seconds_count{protocol="put"} 1`,
		`tsd_query_duration_seconds_count{api="opentsdb"} 1`,
		`tsd_query_duration_seconds_count{api="promql"} 1`,
		`tsd_query_duration_seconds_count{api="last"} 1`,
		`tsd_pebble_table_bytes{table="tsdb"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The route label is the route table's name, never the raw path.
	if strings.Contains(body, `route="/no/such/path"`) {
		t.Errorf("/metrics labels a raw path")
	}
	checkStoreHistograms(t, d, fams)
}

// checkStoreHistograms: the write-ahead log's fsyncs, pebble's own log
// fsyncs and pebble's write stalls are latency histograms in seconds
// (the old count/total/max counters are gone). The put above synced
// pebble's log (its UIDs) and the head's log syncs within its 1 s
// interval, so both fsync histograms count at least one sync; a stall
// cannot be forced through the daemon (storage/pebble's
// TestWriteStallObserved forces one), so that one is only present.
func checkStoreHistograms(t *testing.T, d *daemon, fams map[string]*dto.MetricFamily) {
	t.Helper()
	for _, old := range []string{"tsd_wal_fsyncs_total", "tsd_wal_fsync_seconds_total", "tsd_wal_fsync_max_seconds",
		"tsd_pebble_write_stalls_total", "tsd_pebble_write_stall_seconds_total"} {
		if fams[old] != nil {
			t.Errorf("/metrics still has %s", old)
		}
	}
	count := func(fams map[string]*dto.MetricFamily, name string) uint64 {
		f := fams[name]
		if f == nil || f.GetType() != dto.MetricType_HISTOGRAM || len(f.Metric) != 1 {
			t.Fatalf("/metrics: %s is %v, want one histogram", name, f)
		}
		h := f.Metric[0].GetHistogram()
		if b := h.GetBucket(); len(b) == 0 || b[0].GetUpperBound() > 0.001 || b[len(b)-1].GetUpperBound() < 5 {
			t.Errorf("%s: buckets %v do not span 1 ms to 5 s", name, b)
		}
		return h.GetSampleCount()
	}
	count(fams, "tsd_pebble_write_stall_duration_seconds")
	if n := count(fams, "tsd_pebble_wal_fsync_duration_seconds"); n == 0 {
		t.Errorf("tsd_pebble_wal_fsync_duration_seconds counts no sync after a put")
	}
	eventually(t, "a WAL fsync in tsd_wal_fsync_duration_seconds", func() bool {
		_, body := d.Get(t, "/metrics")
		return count(parseExposition(t, body), "tsd_wal_fsync_duration_seconds") > 0
	})
}

// TestDaemonSlowQueryLog: with tsd.query.slow_log_threshold at 1ns every
// query is slow, and its line names the API and holds the query.
func TestDaemonSlowQueryLog(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.query.slow_log_threshold=1ns")
	d.Get(t, "/api/query?start=1h-ago&m=sum:slow.metric.name")
	d.waitLog(t, "the slow OpenTSDB query", `level=WARN`, `msg="slow query"`, `api=opentsdb`, `slow.metric.name`)
	d.post(t, "/api/v1/query", "application/x-www-form-urlencoded", "query="+url.QueryEscape("sum(rate(slow_promql_metric[5m]))"))
	d.waitLog(t, "the slow PromQL query", `msg="slow query"`, `api=promql`, `slow_promql_metric`)
	if strings.Contains(d.Logs.String(), `msg="slow query" api=opentsdb route=/metrics`) {
		t.Errorf("a non-query route was logged as slow")
	}
}

// TestDaemonSlowQueryLogDefault: the default threshold (10s) logs no
// ordinary query.
func TestDaemonSlowQueryLogDefault(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	d.Get(t, "/api/query?start=1h-ago&m=sum:quick.metric")
	if err := d.Stop(t); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Logs.String(), "slow query") {
		t.Errorf("a quick query was logged as slow:\n%s", d.Logs)
	}
}

var accessLineRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\S+) (\S+) "(\S+) ([^"]*)" (\d{3}) (\d+|-) (\d+\.\d{6})$`)

// TestDaemonAccessLog: tsd.http.access_log writes one line per request
// with the client, user, method, path (no query string), status, bytes
// and duration; it is off by default.
func TestDaemonAccessLog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "access.log")
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.http.access_log="+file)
	d.Get(t, "/api/version")
	d.Get(t, "/api/query?start=1h-ago&m=sum:secret.in.query")
	d.post(t, "/api/put", "application/json", `{"metric":"x"}`)
	if err := d.Stop(t); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d access lines, want 3:\n%s", len(lines), b)
	}
	want := []struct{ method, path, status string }{{"GET", "/api/version", "200"}, {"GET", "/api/query", "400"}, {"POST", "/api/put", "400"}}
	for i, l := range lines {
		m := accessLineRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %q is not an access line", l)
			continue
		}
		if m[1] != "127.0.0.1" || m[2] != "-" || m[3] != want[i].method || m[4] != want[i].path {
			t.Errorf("line %q: want 127.0.0.1 - %v", l, want[i])
		}
		if i == 0 && (m[5] != "200" || m[6] == "0") {
			t.Errorf("line %q: want 200 with a body", l)
		}
	}
	if strings.Contains(string(b), "secret.in.query") {
		t.Errorf("the access log holds a query string:\n%s", b)
	}
	d2 := startDaemon(t, "--data", t.TempDir())
	d2.Get(t, "/api/version")
	d2.Stop(t)
	if accessLineRE.MatchString(strings.TrimSpace(d2.Logs.String())) {
		t.Errorf("access lines without tsd.http.access_log")
	}
}

// TestDaemonLogFormatJSON: tsd.log.format=json writes every line as one
// JSON object, the refused-put line included.
func TestDaemonLogFormatJSON(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.log.format=json")
	d.post(t, "/api/put", "application/json", `{"metric":"m","timestamp":1,"value":"x","tags":{"a":"b"}}`)
	line := d.waitLog(t, "the refused put", `"msg":"points refused"`)
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["level"] != "WARN" || m["protocol"] != "put" || m["points"] != float64(1) {
		t.Errorf("refused line %s: %v %v", line, m, err)
	}
	if err := d.Stop(t); err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(strings.TrimSpace(d.Logs.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
}

// TestLoggerLevels: tsd.log.level drops the lines below it.
func TestLoggerLevels(t *testing.T) {
	for _, c := range []struct {
		level string
		want  []string
	}{{"debug", []string{"d", "i", "w", "e"}}, {"info", []string{"i", "w", "e"}}, {"warn", []string{"w", "e"}}, {"error", []string{"e"}}} {
		var buf bytes.Buffer
		o := obsConfig{logLevel: c.level, logFormat: "text"}
		log := o.newLogger(&buf)
		log.Debug("d")
		log.Info("i")
		log.Warn("w")
		log.Error("e")
		var got []string
		for _, m := range regexp.MustCompile(`msg=(\w)`).FindAllStringSubmatch(buf.String(), -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, "") != strings.Join(c.want, "") {
			t.Errorf("level %s wrote %v, want %v", c.level, got, c.want)
		}
	}
}

// promSeries runs a PromQL instant query and returns its result's
// series.
func (d *daemon) promSeries(t *testing.T, q string) []map[string]any {
	t.Helper()
	code, body := d.Get(t, "/api/v1/query?query="+url.QueryEscape(q))
	var ans struct {
		Status string
		Data   struct{ Result []map[string]any }
	}
	if err := json.Unmarshal([]byte(body), &ans); code != 200 || err != nil {
		t.Fatalf("query %s = %d %s (%v)", q, code, body, err)
	}
	return ans.Data.Result
}

// TestDaemonSelfScrape: with tsd.stats.self_scrape_interval the daemon
// stores its own /metrics in itself, with job="tsd" and its instance, a
// histogram as its buckets, sum and count; without it, nothing is
// stored.
func TestDaemonSelfScrape(t *testing.T) {
	t.Parallel() // its own daemon
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.stats.self_scrape_interval=200ms")
	_, port, _ := net.SplitHostPort(d.Addr)
	var res []map[string]any
	eventually(t, "self-scraped go_goroutines", func() bool {
		res = d.promSeries(t, `go_goroutines{job="tsd"}`)
		return len(res) == 1
	})
	labels := res[0]["metric"].(map[string]any)
	if inst, _ := labels["instance"].(string); !strings.HasSuffix(inst, ":"+port) {
		t.Errorf("instance = %v, want <host>:%s", labels["instance"], port)
	}
	eventually(t, "self-scraped request histogram", func() bool {
		return len(d.promSeries(t, `tsd_http_request_duration_seconds_bucket{job="tsd",route="/api/v1/query",le="+Inf"}`)) > 0 &&
			len(d.promSeries(t, `histogram_quantile(0.9, sum by (le) (rate(tsd_http_request_duration_seconds_bucket{job="tsd"}[1m])))`)) == 1
	})
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}

	d2 := startDaemon(t, "--data", t.TempDir())
	d2.Get(t, "/metrics")
	if res := d2.promSeries(t, `{job="tsd"}`); len(res) != 0 {
		t.Errorf("self-scrape off stored %d series", len(res))
	}
}

// TestDaemonMetricsBigtable: on the bigtable engine /metrics parses whole
// with no duplicates, counts the daemon's Bigtable requests in
// tsd_bigtable_request_duration_seconds, and has no pebble histogram.
func TestDaemonMetricsBigtable(t *testing.T) {
	t.Parallel() // its own emulator
	d := startBTEmulator(t).daemon(t, t.TempDir())
	if code, ans := d.post(t, "/api/put", "application/json",
		fmt.Sprintf(`{"metric":"bt.m","timestamp":%d,"value":1,"tags":{"h":"a"}}`, time.Now().Unix())); code != 204 {
		t.Fatalf("put = %d %s", code, ans)
	}
	_, body := d.Get(t, "/metrics")
	fams := parseExposition(t, body)
	f := fams["tsd_bigtable_request_duration_seconds"]
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM || len(f.Metric) != 1 {
		t.Fatalf("tsd_bigtable_request_duration_seconds is %v, want one histogram", f)
	}
	if n := f.Metric[0].GetHistogram().GetSampleCount(); n == 0 {
		t.Errorf("tsd_bigtable_request_duration_seconds counts no request after a start and a put")
	}
	for _, name := range []string{"tsd_bigtable_errors_total", "tsd_wal_fsync_duration_seconds"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, name := range []string{"tsd_pebble_wal_fsync_duration_seconds", "tsd_pebble_write_stall_duration_seconds",
		"tsd_bigtable_requests_total", "tsd_bigtable_request_seconds_total"} {
		if fams[name] != nil {
			t.Errorf("/metrics has %s on the bigtable engine", name)
		}
	}
}
