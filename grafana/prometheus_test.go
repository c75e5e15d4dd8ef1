package grafana

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// The fixtures' data: 41 samples 15 s apart from base (Unix seconds).
const (
	base    = 1700000000
	samples = 41
	stepSec = 15
	end     = base + (samples-1)*stepSec
)

// loadData writes the fixtures' series through the real ingest paths:
// cpu_usage{host=web01|web02,dc=east} over OpenTSDB's /api/put (web01 =
// 1.5*i, web02 = 2) and http_requests_total{job="api",instance="a:1"} =
// 10*i over Prometheus remote_write.
func loadData(t *testing.T, addr string) {
	t.Helper()
	var pts []map[string]any
	wr := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: []prompb.Label{
		{Name: "__name__", Value: "http_requests_total"}, {Name: "instance", Value: "a:1"}, {Name: "job", Value: "api"}}}}}
	for i := range samples {
		ts := int64(base + i*stepSec)
		pts = append(pts,
			map[string]any{"metric": "cpu_usage", "timestamp": ts, "value": 1.5 * float64(i), "tags": map[string]string{"host": "web01", "dc": "east"}},
			map[string]any{"metric": "cpu_usage", "timestamp": ts, "value": 2, "tags": map[string]string{"host": "web02", "dc": "east"}})
		wr.Timeseries[0].Samples = append(wr.Timeseries[0].Samples, prompb.Sample{Timestamp: ts * 1000, Value: 10 * float64(i)})
	}
	body, _ := json.Marshal(pts)
	if code, b := send(t, "POST", "http://"+addr+"/api/put", "application/json", body, nil); code != 204 {
		t.Fatalf("/api/put = %d %s", code, b)
	}
	raw, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"Content-Encoding": "snappy", "X-Prometheus-Remote-Write-Version": "0.1.0"}
	if code, b := send(t, "POST", "http://"+addr+"/api/v1/write", "application/x-protobuf", snappy.Encode(nil, raw), hdr); code != 204 {
		t.Fatalf("remote_write = %d %s", code, b)
	}
}

// send sends one request and returns the status and body.
func send(t *testing.T, method, u, ctype string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// grafana sends requests the way Grafana's Prometheus data source does:
// POST with an application/x-www-form-urlencoded body (the default
// httpMethod) or GET with the parameters in the URL, under the data
// source URL.
type grafana struct {
	t   *testing.T
	url string // data source URL, e.g. http://127.0.0.1:4242 or .../prometheus
}

func (g grafana) post(path string, form url.Values) (int, promResponse) {
	g.t.Helper()
	code, body := send(g.t, "POST", g.url+"/"+path, "application/x-www-form-urlencoded", []byte(form.Encode()), nil)
	return code, g.decode(path, code, body)
}

func (g grafana) get(path string, params url.Values) (int, promResponse) {
	g.t.Helper()
	code, body := send(g.t, "GET", g.url+"/"+path+"?"+params.Encode(), "", nil, nil)
	return code, g.decode(path, code, body)
}

func (g grafana) decode(path string, code int, body string) promResponse {
	g.t.Helper()
	var r promResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		g.t.Fatalf("%s: %d %q is not JSON: %v", path, code, body, err)
	}
	r.raw = body
	return r
}

// promResponse has the fields Grafana's converter (pkg/promlib/converter)
// reads from every answer.
type promResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
	Infos     []string        `json:"infos"`
	raw       string
}

// queryData is data of a query answer; Result depends on ResultType.
type queryData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

// sample is a [<seconds>, "<value>"] pair; it refuses a value that is not
// a string or a time that is not a number, as Grafana does.
type sample struct {
	T float64
	V float64
}

func (s *sample) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("sample %s is not a pair", b)
	}
	if err := json.Unmarshal(pair[0], &s.T); err != nil {
		return fmt.Errorf("sample time %s is not a number", pair[0])
	}
	var v string
	if err := json.Unmarshal(pair[1], &v); err != nil {
		return fmt.Errorf("sample value %s is not a string", pair[1])
	}
	f, err := strconv.ParseFloat(v, 64) // accepts "NaN", "+Inf", "-Inf"
	s.V = f
	return err
}

type matrixSeries struct {
	Metric map[string]string `json:"metric"`
	Values []sample          `json:"values"`
}

type vectorSample struct {
	Metric map[string]string `json:"metric"`
	Value  sample            `json:"value"`
}

// success checks status and returns the data decoded into dst.
func success(t *testing.T, name string, code int, r promResponse, dst any) {
	t.Helper()
	if code != 200 || r.Status != "success" {
		t.Fatalf("%s: %d %s", name, code, r.raw)
	}
	if err := json.Unmarshal(r.Data, dst); err != nil {
		t.Fatalf("%s: data %s: %v", name, r.Data, err)
	}
}

// query checks a query answer's resultType and decodes its result.
func query(t *testing.T, name string, code int, r promResponse, resultType string, dst any) {
	t.Helper()
	var d queryData
	success(t, name, code, r, &d)
	if d.ResultType != resultType {
		t.Fatalf("%s: resultType %q, want %q: %s", name, d.ResultType, resultType, r.raw)
	}
	if err := json.Unmarshal(d.Result, dst); err != nil {
		t.Fatalf("%s: result: %v: %s", name, err, r.raw)
	}
}

// secs formats a time as Grafana's backend does (float seconds, 'f', -1).
func secs(sec float64) string { return strconv.FormatFloat(sec, 'f', -1, 64) }

// TestGrafanaPrometheusDataSource replays Grafana's Prometheus data source
// against a real tsd, at the root URL and under /prometheus.
func TestGrafanaPrometheusDataSource(t *testing.T) {
	d := startDaemon(t)
	loadData(t, d.Addr)
	for _, prefix := range []string{"", "/prometheus"} {
		t.Run("url="+prefix+"/", func(t *testing.T) {
			g := grafana{t: t, url: "http://" + d.Addr + prefix}
			t.Run("health check", g.healthCheck)
			t.Run("range queries", g.rangeQueries)
			t.Run("instant queries", g.instantQueries)
			t.Run("look-ups", g.lookups)
			t.Run("start-up probes", g.probes)
			t.Run("errors", g.errors)
		})
	}
}

// healthCheck is "Save & test": instant 1+1 at time 4, then buildinfo,
// which must not list features (Grafana would take tsd for Mimir).
func (g grafana) healthCheck(t *testing.T) {
	g.t = t
	code, r := g.post("api/v1/query", url.Values{"query": {"1+1"}, "time": {"4"}})
	var scalar sample
	query(t, "1+1", code, r, "scalar", &scalar)
	if scalar != (sample{4, 2}) {
		t.Errorf("1+1 at 4 = %+v", scalar)
	}
	code, r = g.get("api/v1/status/buildinfo", nil)
	var bi map[string]any
	success(t, "buildinfo", code, r, &bi)
	v, _ := bi["version"].(string)
	if parts := strings.Split(v, "."); len(parts) != 3 || parts[0] < "2" {
		t.Errorf("buildinfo version %q is not a Prometheus 2.x/3.x semver", v)
	}
	if _, ok := bi["features"]; ok {
		t.Errorf("buildinfo has features: %s", r.raw)
	}
}

func (g grafana) rangeQueries(t *testing.T) {
	g.t = t
	form := func(q string) url.Values {
		return url.Values{"query": {q}, "start": {secs(base)}, "end": {secs(end)}, "step": {secs(stepSec)}}
	}
	var m []matrixSeries
	code, r := g.post("api/v1/query_range", form(`cpu_usage{host="web01"}`))
	query(t, "cpu_usage web01", code, r, "matrix", &m)
	want := matrixSeries{Metric: map[string]string{"__name__": "cpu_usage", "dc": "east", "host": "web01"}}
	for i := range samples {
		want.Values = append(want.Values, sample{float64(base + i*stepSec), 1.5 * float64(i)})
	}
	if len(m) != 1 || !reflect.DeepEqual(m[0], want) {
		t.Errorf("cpu_usage web01 = %+v\nwant %+v", m, want)
	}

	m = nil // Unmarshal merges into existing maps
	code, r = g.post("api/v1/query_range", form(`sum by (dc) (cpu_usage)`))
	query(t, "sum by dc", code, r, "matrix", &m)
	if len(m) != 1 || !reflect.DeepEqual(m[0].Metric, map[string]string{"dc": "east"}) || len(m[0].Values) != samples ||
		m[0].Values[10] != (sample{base + 150, 17}) {
		t.Errorf("sum by (dc) = %s", r.raw)
	}

	m = nil
	code, r = g.post("api/v1/query_range", form(`rate(http_requests_total[1m])`))
	query(t, "rate", code, r, "matrix", &m)
	if len(m) != 1 || m[0].Metric["job"] != "api" || m[0].Metric["instance"] != "a:1" || m[0].Metric["__name__"] != "" {
		t.Fatalf("rate metric = %s", r.raw)
	}
	if n := len(m[0].Values); n != samples-1 || m[0].Values[0].T != base+stepSec || m[0].Values[n-1].T != end {
		t.Errorf("rate steps = %s", r.raw) // the first step has one sample: no rate
	}
	for _, s := range m[0].Values {
		if s.T >= base+60 && math.Abs(s.V-10.0/15) > 1e-9 { // a full window: no extrapolation
			t.Errorf("rate at %v = %v, want 0.667", s.T, s.V)
		}
	}
}

func (g grafana) instantQueries(t *testing.T) {
	g.t = t
	var v []vectorSample
	code, r := g.post("api/v1/query", url.Values{"query": {`cpu_usage`}, "time": {secs(end)}})
	query(t, "cpu_usage", code, r, "vector", &v)
	got := map[string]sample{}
	for _, s := range v {
		got[s.Metric["host"]] = s.Value
	}
	if want := map[string]sample{"web01": {end, 60}, "web02": {end, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("cpu_usage at end = %s", r.raw)
	}
	// Special values travel as strings.
	for q, want := range map[string]string{
		`cpu_usage{host="web01"} / 0`:                           `"+Inf"`,
		`-cpu_usage{host="web01"} / 0`:                          `"-Inf"`,
		`(cpu_usage{host="web01"} - cpu_usage{host="web01"})/0`: `"NaN"`,
	} {
		code, r = g.post("api/v1/query", url.Values{"query": {q}, "time": {secs(end)}})
		v = nil
		query(t, q, code, r, "vector", &v)
		if len(v) != 1 || !strings.Contains(r.raw, `,`+want+`]`) {
			t.Errorf("%s = %s, want value %s", q, r.raw, want)
		}
	}
	// A query_result(...) template variable: GET instant query.
	v = nil
	code, r = g.get("api/v1/query", url.Values{"query": {`count(cpu_usage)`}, "time": {secs(end)}})
	query(t, "count", code, r, "vector", &v)
	if len(v) != 1 || v[0].Value.V != 2 {
		t.Errorf("count(cpu_usage) = %s", r.raw)
	}
}

// lookups are the autocomplete and variable calls: metric names, label
// names and values (with match[]) and series.
func (g grafana) lookups(t *testing.T) {
	g.t = t
	window := func(kv ...string) url.Values {
		v := url.Values{"start": {secs(base)}, "end": {secs(end)}, "limit": {"40000"}}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		name, method, path string
		params             url.Values
		want               any
	}{
		{"metric names", "GET", "api/v1/label/__name__/values", window(), []string{"cpu_usage", "http_requests_total"}},
		{"label names", "GET", "api/v1/labels", window(), []string{"__name__", "dc", "host", "instance", "job"}},
		{"label names match", "POST", "api/v1/labels", window("match[]", `cpu_usage`), []string{"__name__", "dc", "host"}},
		{"label values match", "GET", "api/v1/label/host/values", window("match[]", `{__name__="cpu_usage",dc="east"}`), []string{"web01", "web02"}},
		{"label values two matches", "GET", "api/v1/label/job/values", window("match[]", `cpu_usage`, "match[]", `http_requests_total`), []string{"api"}},
		{"series", "POST", "api/v1/series", window("match[]", `cpu_usage{host=~"web0[12]"}`), []map[string]string{
			{"__name__": "cpu_usage", "dc": "east", "host": "web01"}, {"__name__": "cpu_usage", "dc": "east", "host": "web02"}}},
		{"series GET", "GET", "api/v1/series", window("match[]", `http_requests_total`), []map[string]string{
			{"__name__": "http_requests_total", "instance": "a:1", "job": "api"}}},
	} {
		var code int
		var r promResponse
		if tc.method == "POST" {
			code, r = g.post(tc.path, tc.params)
		} else {
			code, r = g.get(tc.path, tc.params)
		}
		got := reflect.New(reflect.TypeOf(tc.want))
		success(t, tc.name, code, r, got.Interface())
		if !reflect.DeepEqual(got.Elem().Interface(), tc.want) {
			t.Errorf("%s = %s, want %v", tc.name, r.Data, tc.want)
		}
	}
}

// probes are what the frontend asks at start-up: the exemplar probe (in
// milliseconds, only status matters), metadata and rules.
func (g grafana) probes(t *testing.T) {
	g.t = t
	now := time.Now()
	code, r := g.get("api/v1/query_exemplars", url.Values{"query": {"test"},
		"start": {strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10)}, "end": {strconv.FormatInt(now.UnixMilli(), 10)}})
	var ex []any
	success(t, "exemplars", code, r, &ex)
	var md map[string]any
	code, r = g.get("api/v1/metadata", nil)
	success(t, "metadata", code, r, &md)
	var rules struct {
		Groups []any `json:"groups"`
	}
	code, r = g.get("api/v1/rules", nil)
	success(t, "rules", code, r, &rules)
	if rules.Groups == nil {
		t.Errorf("rules data has no groups array: %s", r.raw)
	}
}

// errors: Grafana shows error and errorType, and retries a POST that
// answers 400 with GET, which must fail the same way.
func (g grafana) errors(t *testing.T) {
	g.t = t
	bad := url.Values{"query": {`sum(cpu_usage`}, "start": {secs(base)}, "end": {secs(end)}, "step": {"15"}}
	for _, send := range []func(string, url.Values) (int, promResponse){g.post, g.get} {
		code, r := send("api/v1/query_range", bad)
		if code != 400 || r.Status != "error" || r.ErrorType != "bad_data" || !strings.Contains(r.Error, "unclosed left parenthesis") {
			t.Errorf("bad query = %d %s", code, r.raw)
		}
	}
	tooMany := url.Values{"query": {`cpu_usage`}, "start": {"0"}, "end": {secs(end)}, "step": {"15"}}
	code, r := g.post("api/v1/query_range", tooMany)
	if code != 400 || r.ErrorType != "bad_data" || !strings.Contains(r.Error, "exceeded maximum resolution of 11,000 points") {
		t.Errorf("too many points = %d %s", code, r.raw)
	}
}
