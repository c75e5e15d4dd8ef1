package grafana

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGrafanaOpenTSDBDataSource replays both generations of Grafana's
// OpenTSDB data source (its browser frontend, then its Go backend)
// against a real tsd: the browser's one-body queries (2.3 mode with showQuery, 2.2 mode with
// msResolution, 2.1 mode with tags only), the Go backend's one request per
// query (2.4 mode with ?arrays=true, and without), the alerting backend's
// ms body, the metadata calls, annotation queries and the error body.
// Every expected value comes from the test's own points
// (opentsdb_model_test.go). It runs for both row formats, first while the
// points are in the head, then after a restart, which flushed them to the
// store.
func TestGrafanaOpenTSDBDataSource(t *testing.T) {
	for _, format := range []string{"dense", "opentsdb"} {
		t.Run("format="+format, func(t *testing.T) {
			args := []string{"--data", t.TempDir(), "--tsd.storage.format=" + format}
			d := startDaemon(t, args...)
			data := newOTSData(time.Now())
			data.load(t, d.Addr)
			t.Run("head", func(t *testing.T) { runOpenTSDBFixtures(t, "http://"+d.Addr, data) })
			if err := d.Stop(t); err != nil {
				t.Fatalf("stop: %v\n%s", err, d.Logs)
			}
			d = startDaemon(t, args...)
			t.Run("restarted", func(t *testing.T) { runOpenTSDBFixtures(t, "http://"+d.Addr, data) })
		})
	}
}

// runOpenTSDBFixtures runs every fixture against the tsd at base.
func runOpenTSDBFixtures(t *testing.T, base string, data *otsData) {
	t.Run("browser/2.3", func(t *testing.T) { testBrowser23(t, base, data) })
	t.Run("browser/2.3-filters", func(t *testing.T) { testBrowser23Filters(t, base, data) })
	t.Run("browser/2.3-fills", func(t *testing.T) { testBrowserFills(t, base, data) })
	t.Run("browser/2.2-ms", func(t *testing.T) { testBrowser22ms(t, base, data) })
	t.Run("browser/2.1", func(t *testing.T) { testBrowser21(t, base, data) })
	t.Run("backend/2.4-arrays", func(t *testing.T) { testBackend(t, base, data, true) })
	t.Run("backend/2.3", func(t *testing.T) { testBackend(t, base, data, false) })
	t.Run("alerting", func(t *testing.T) { testAlerting(t, base, data) })
	t.Run("metadata", func(t *testing.T) { testMetadata(t, base) })
	t.Run("annotations/browser", func(t *testing.T) { testAnnotationQuery(t, base, data) })
	t.Run("annotations/backend", func(t *testing.T) { testBackendAnnotations(t, base, data) })
	t.Run("error", func(t *testing.T) { testQueryError(t, base, data) })
}

// postQuery sends a fixture body as Grafana does: POST, application/json.
func postQuery(t *testing.T, url, body string) (int, string) {
	t.Helper()
	return send(t, "POST", url, "application/json", []byte(body), nil)
}

// browserRange is the browser's "Last 6 hours": ms start, no end; with
// end > 0, an absolute range from that start to end (seconds).
func (d *otsData) browserRange(end int64) map[string]string {
	v := d.vars(0, end)
	v["${START_MS}"] = strconv.FormatInt(d.startMs, 10)
	return v
}

// testBrowser23 is the older frontend with tsdbVersion 3: three targets in
// one body (group by host; a non-grouping literal_or filter; a counter
// rate with counterMax), results mapped back by query.index, series and
// global annotations on every element.
func testBrowser23(t *testing.T, base string, d *otsData) {
	body := fixture(t, "opentsdb_browser_v23_query.json", d.browserRange(0))
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "browser 2.3", code, resp)
	var want []otsWant
	for _, s := range d.cpu {
		w := wantGroup([]otsSeries{s}, otsDownsample(s.pts, 60, "avg"))
		if s.tags["host"] == "web01" {
			w.notes = []otsNote{d.seriesNote}
		}
		want = append(want, w)
	}
	lga := members(d.cpu, map[string]string{"dc": "lga"})
	w := wantGroup(lga, otsGroup(otsEach(lga, func(p []otsPoint) []otsPoint { return otsDownsample(p, 30, "max") }), "max"))
	w.index, w.notes = 1, []otsNote{d.seriesNote}
	want = append(want, w)
	w = wantGroup(d.octets, otsGroup(otsEach(d.octets, func(p []otsPoint) []otsPoint {
		return otsRate(otsDownsample(p, 10, "avg"), true, 65535, false)
	}), "sum"))
	w.index = 2
	want = append(want, w)
	checkResults(t, "browser 2.3", rs, want, checkOpts{showQuery: true, notes: true, global: []otsNote{d.globalNote}})
	checkEcho(t, rs)
}

// testBrowser23Filters sends one sub-query per filter type of Grafana's
// filter editor (regexp, not_literal_or, iwildcard with iliteral_or,
// wildcard, literal_or), grouping and not, a "0.5s" interval as Grafana
// rewrites it (500ms), and explicitTags matching and not matching.
func testBrowser23Filters(t *testing.T, base string, d *otsData) {
	body := fixture(t, "opentsdb_browser_v23_filters_query.json", d.browserRange(0))
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "browser 2.3 filters", code, resp)
	host := func(h string) otsSeries { return members(d.cpu, map[string]string{"host": h})[0] }
	avg1m := func(p []otsPoint) []otsPoint { return otsDownsample(p, 60, "avg") }
	group := func(index int, agg string, ds func([]otsPoint) []otsPoint, ms ...otsSeries) otsWant {
		w := wantGroup(ms, otsGroup(otsEach(ms, ds), agg))
		w.index = index
		if slices.ContainsFunc(ms, func(s otsSeries) bool { return s.tags["host"] == "web01" }) {
			w.notes = []otsNote{d.seriesNote}
		}
		return w
	}
	want := []otsWant{
		group(0, "sum", avg1m, host("web01")),
		group(0, "sum", avg1m, host("web02")),
		group(1, "sum", avg1m, host("web02"), host("web03")),
		group(2, "sum", avg1m, host("web01"), host("web02")),
		// 500 ms divides every point's time: each point is its own bucket.
		group(3, "avg", func(p []otsPoint) []otsPoint { return otsDownsample(p, 1, "avg") }, host("web03")),
		group(4, "sum", func(p []otsPoint) []otsPoint { return otsDownsample(p, 60, "max") }, host("web03")),
	}
	checkByIndex(t, "browser 2.3 filters", rs, want, 6, checkOpts{showQuery: true, notes: true, global: []otsNote{d.globalNote}})
}

// checkByIndex checks the results of each of n sub-queries on their own,
// as Grafana maps them by query.index: results of different sub-queries
// may share metric and tags.
func checkByIndex(t *testing.T, name string, rs []otsResult, want []otsWant, n int, o checkOpts) {
	t.Helper()
	for i := range n {
		var sub []otsResult
		for _, r := range rs {
			if r.Query != nil && r.Query.Index != nil && *r.Query.Index == i {
				sub = append(sub, r)
			}
		}
		var w []otsWant
		for _, x := range want {
			if x.index == i {
				w = append(w, x)
			}
		}
		checkResults(t, fmt.Sprintf("%s index %d", name, i), sub, w, o)
	}
	if len(rs) != len(want) {
		t.Errorf("%s: %d results, want %d", name, len(rs), len(want))
	}
}

// testBrowserFills is a 2.3 body over an absolute range with the fill
// policies of Grafana's editor: null (the browser draws a gap) and nan
// (written "NaN", as OpenTSDB does) for the buckets without points.
func testBrowserFills(t *testing.T, base string, d *otsData) {
	start, end := d.span()
	v := d.vars(start, end)
	body := fixture(t, "opentsdb_browser_v23_fill_query.json", v)
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "browser 2.3 fills", code, resp)
	web03 := members(d.cpu, map[string]string{"host": "web03"})
	var want []otsWant
	for i, fill := range []string{"null", "nan"} {
		w := wantGroup(web03, otsFill(otsDownsample(web03[0].pts, 60, "avg"), 60, start, end, math.NaN()))
		w.index, w.fill = i, fill
		want = append(want, w)
	}
	checkByIndex(t, "browser 2.3 fills", rs, want, 2, checkOpts{showQuery: true})
}

// checkEcho checks the rest of the showQuery echo against the fixture's
// sub-queries.
func checkEcho(t *testing.T, rs []otsResult) {
	t.Helper()
	subs := []otsQueryEcho{{Metric: "sys.cpu.user", Aggregator: "sum"}, {Metric: "sys.cpu.user", Aggregator: "max"},
		{Metric: "if.octets.in", Aggregator: "sum", Rate: true}}
	ds := []string{"1m-avg", "30s-max", "10s-avg"}
	for _, r := range rs {
		q := r.Query
		if q == nil || q.Index == nil || *q.Index < 0 || *q.Index > 2 {
			continue // reported by checkResults
		}
		w := subs[*q.Index]
		if q.Metric != w.Metric || q.Aggregator != w.Aggregator || q.Rate != w.Rate || q.Downsample == nil || *q.Downsample != ds[*q.Index] {
			t.Errorf("query echo %+v (downsample %v), want %+v downsample %s", *q, q.Downsample, w, ds[*q.Index])
		}
	}
}

// testBrowser22ms is the older frontend with tsdbVersion 2 and
// tsdbResolution 2 over an absolute range: msResolution, a grouping
// wildcard filter, ms keys, results matched by metric.
func testBrowser22ms(t *testing.T, base string, d *otsData) {
	_, end := d.span()
	body := fixture(t, "opentsdb_browser_v22_ms_query.json", d.browserRange(end))
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "browser 2.2 ms", code, resp)
	ds := func(p []otsPoint) []otsPoint { return otsDownsample(p, 60, "avg") }
	var want []otsWant
	for i, dc := range []string{"lga", "sjc"} {
		ms := members(d.cpu, map[string]string{"dc": dc})
		want = append(want, wantGroup(ms, otsGroup(otsEach(ms, ds), "avg")))
		if i == 0 {
			want[i].notes = []otsNote{d.seriesNote}
		}
	}
	checkResults(t, "browser 2.2 ms", rs, want, checkOpts{ms: true, notes: true, global: []otsNote{d.globalNote}})
}

// testBrowser21 is the older frontend with tsdbVersion 1 (<=2.1): tags
// only, one holding a multi-value template variable's pipe form,
// rateOptions without dropResets, an absolute range; results go back to
// their targets by metric and tag values (Grafana's mapMetricsToTargets).
func testBrowser21(t *testing.T, base string, d *otsData) {
	_, end := d.span()
	body := fixture(t, "opentsdb_browser_v21_query.json", d.browserRange(end))
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "browser 2.1", code, resp)
	var want []otsWant
	for _, h := range []string{"web01", "web03"} {
		ms := members(d.cpu, map[string]string{"host": h})
		want = append(want, wantGroup(ms, otsDownsample(ms[0].pts, 60, "avg")))
	}
	want[0].notes = []otsNote{d.seriesNote}
	ms := members(d.octets, map[string]string{"host": "web02"})
	want = append(want, wantGroup(ms, otsRate(otsDownsample(ms[0].pts, 60, "avg"), true, math.MaxInt64, false)))
	checkResults(t, "browser 2.1", rs, want, checkOpts{notes: true, global: []otsNote{d.globalNote}})
	targets := []grafanaTarget{{"sys.cpu.user", map[string]string{"host": "web01|web03"}}, {"if.octets.in", map[string]string{"host": "web02"}}}
	for i, r := range rs {
		got := slices.IndexFunc(targets, func(tg grafanaTarget) bool { return tg.selects(r) })
		if want := map[string]int{"sys.cpu.user": 0, "if.octets.in": 1}[r.Metric]; got != want {
			t.Errorf("browser 2.1: result %d %s %v maps to target %d, want %d", i, r.Metric, r.Tags, got, want)
		}
	}
}

// grafanaTarget is a panel target with tags (no filters).
type grafanaTarget struct {
	metric string
	tags   map[string]string
}

// selects is Grafana's test that a result belongs to the target: same
// metric, and each tag value, split on '|', holds the result's, or is *.
func (tg grafanaTarget) selects(r otsResult) bool {
	for k, v := range tg.tags {
		if v != "*" && !slices.Contains(strings.Split(v, "|"), r.Tags[k]) {
			return false
		}
	}
	return tg.metric == r.Metric
}

// testBackend is the newer Go backend: one POST per Grafana query, start
// and end in seconds, ?arrays=true in 2.4 mode; the answer must decode
// into Grafana's own response types.
func testBackend(t *testing.T, base string, d *otsData, v24 bool) {
	start, end := d.span()
	vars := d.vars(start, end)
	url := base + "/api/query"
	if v24 {
		url += "?arrays=true"
	}
	for _, c := range backendCases(d, start, end) {
		code, resp := postQuery(t, url, fixture(t, c.fixture, vars))
		rs := decodeResults(t, c.fixture, code, resp)
		checkResults(t, c.fixture, rs, c.want, checkOpts{arrays: v24})
		keys, err := grafanaDecode(resp, v24)
		if err != nil {
			t.Errorf("%s: Grafana's backend cannot decode the answer: %v", c.fixture, err)
		}
		for i, k := range keys {
			if want := tagKeys(rs[i]); !slices.Equal(k, want) {
				t.Errorf("%s: result %d tagKeys %v, want %v", c.fixture, i, k, want)
			}
		}
	}
}

// tagKeys is what the backend puts in meta.custom.tagKeys.
func tagKeys(r otsResult) []string {
	var k []string
	for key := range r.Tags {
		k = append(k, key)
	}
	slices.Sort(k)
	return append(k, r.AggregateTags...)
}

type backendCase struct {
	fixture string
	want    []otsWant
}

// backendCases are the backend fixtures over [start, end]: avg by dc of a
// 1m-sum with fill zero; a dropResets counter rate of 1m averages (the
// reset bucket dropped and interpolated in the sum); explicitTags exact
// and not matching.
func backendCases(d *otsData, start, end int64) []backendCase {
	var a []otsWant
	for _, dc := range []string{"lga", "sjc"} {
		ms := members(d.cpu, map[string]string{"dc": dc})
		a = append(a, wantGroup(ms, otsGroup(otsEach(ms, func(p []otsPoint) []otsPoint {
			return otsFill(otsDownsample(p, 60, "sum"), 60, start, end, 0)
		}), "avg")))
	}
	b := wantGroup(d.octets, otsGroup(otsEach(d.octets, func(p []otsPoint) []otsPoint {
		return otsRate(otsDownsample(p, 60, "avg"), true, 0, true)
	}), "sum"))
	web03 := members(d.cpu, map[string]string{"host": "web03"})
	c := wantGroup(web03, otsWindow(web03[0].pts, start, end))
	return []backendCase{
		{"opentsdb_backend_query_A.json", a},
		{"opentsdb_backend_query_B.json", []otsWant{b}},
		{"opentsdb_backend_query_C.json", []otsWant{c}},
		{"opentsdb_backend_query_D.json", nil},
	}
}

// testAlerting is the intermediate backend (alerting in Grafana 8-11): ms
// start and end, all queries in one body, dps keyed in seconds.
func testAlerting(t *testing.T, base string, d *otsData) {
	start, end := d.span()
	body := fixture(t, "opentsdb_alerting_query.json", d.vars(start, end))
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "alerting", code, resp)
	cases := backendCases(d, start, end)
	checkResults(t, "alerting", rs, append(cases[0].want, cases[1].want...), checkOpts{})
	if _, err := grafanaDecode(resp, false); err != nil {
		t.Errorf("alerting: Grafana's backend cannot decode the answer: %v", err)
	}
}

// testAnnotationQuery is the browser's annotation query: sum of the
// annotation target over the dashboard range; Grafana reads the first
// element's annotations, or globalAnnotations when "global" is ticked.
// The global note three days back must not appear.
func testAnnotationQuery(t *testing.T, base string, d *otsData) {
	body := fixture(t, "opentsdb_annotation_query.json", d.browserRange(0))
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "annotation query", code, resp)
	var pts [][]otsPoint
	for _, s := range d.cpu {
		pts = append(pts, s.pts)
	}
	w := wantGroup(d.cpu, otsGroup(pts, "sum"))
	w.notes = []otsNote{d.seriesNote}
	checkResults(t, "annotation query", rs, []otsWant{w}, checkOpts{showQuery: true, notes: true, global: []otsNote{d.globalNote}})
	if len(rs) > 0 {
		for _, n := range append(rs[0].Annotations, rs[0].GlobalAnnotations...) {
			if ev := int64(n.StartTime) * 1000; ev < d.startMs || ev > time.Now().UnixMilli() {
				t.Errorf("annotation %+v: event time %d outside the dashboard range", n, ev)
			}
		}
	}
}

// testBackendAnnotations sends an annotation target through the backend
// form (seconds, no downsampling): the series note comes back on the
// first element; global notes only when asked for.
func testBackendAnnotations(t *testing.T, base string, d *otsData) {
	start, end := d.span()
	body := fixture(t, "opentsdb_backend_annotation_query.json", d.vars(start, end))
	code, resp := postQuery(t, base+"/api/query", body)
	rs := decodeResults(t, "backend annotation query", code, resp)
	var pts [][]otsPoint
	for _, s := range d.cpu {
		pts = append(pts, s.pts)
	}
	w := wantGroup(d.cpu, otsWindow(otsGroup(pts, "sum"), start, end))
	w.notes = []otsNote{d.seriesNote}
	checkResults(t, "backend annotation query", rs, []otsWant{w}, checkOpts{notes: true})
}

// testQueryError checks the error body the browser shows
// (err.data.error.message) for a metric tsd has never seen.
func testQueryError(t *testing.T, base string, d *otsData) {
	body := fixture(t, "opentsdb_browser_unknown_metric.json", d.browserRange(0))
	code, resp := postQuery(t, base+"/api/query", body)
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(resp), &e); err != nil || code != 400 || e.Error.Code != 400 ||
		!strings.Contains(e.Error.Message, "no.such.metric") {
		t.Errorf("unknown metric = %d %s, want 400 with error.message naming the metric", code, resp)
	}
}
