package promapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// t0 is the first sample's time, ms.
const t0 = 1_700_000_000_000

// openDB opens a Prometheus tsdb in a temp dir with three series sampled
// every 15 s for 10 minutes: up{job="a"} = 1, up{job="b"} = 0 and
// temp{host="h1"} = i (the sample's index).
func openDB(t testing.TB) *tsdb.DB {
	t.Helper()
	db := openEmptyDB(t)
	app := db.Appender(context.Background())
	series := []labels.Labels{
		labels.FromStrings("__name__", "up", "job", "a", "instance", "x:1"),
		labels.FromStrings("__name__", "up", "job", "b", "instance", "y:2"),
		labels.FromStrings("__name__", "temp", "host", "h1"),
	}
	for i := range 41 {
		ts := int64(t0 + i*15_000)
		for j, ls := range series {
			v := [...]float64{1, 0, float64(i)}[j]
			if _, err := app.Append(0, ls, ts, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// openEmptyDB opens an empty Prometheus tsdb in a temp dir, closed with
// the test.
func openEmptyDB(t testing.TB) *tsdb.DB {
	t.Helper()
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = 0
	db, err := tsdb.Open(t.TempDir(), slog.New(slog.DiscardHandler), nil, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// serveAPI serves an API over q on a real fasthttp listener with the
// routes package api gives it, and returns its base URL.
func serveAPI(t *testing.T, q storage.Queryable) string {
	t.Helper()
	return serveOptions(t, Options{Queryable: q, Revision: "abc123", Logger: slog.New(slog.DiscardHandler)})
}

// serveOptions is serveAPI for an API built from opts.
func serveOptions(t *testing.T, opts Options) string {
	t.Helper()
	return serve(t, New(opts))
}

// serve serves a's routes on a real fasthttp listener and returns its
// base URL.
func serve(t *testing.T, a *API) string {
	t.Helper()
	routes := map[string]fasthttp.RequestHandler{
		"/api/v1/query": a.Query, "/api/v1/query_range": a.QueryRange,
		"/api/v1/series": a.Series, "/api/v1/labels": a.Labels,
		"/api/v1/metadata": a.Metadata, "/api/v1/rules": a.Rules,
		"/api/v1/query_exemplars": a.QueryExemplars, "/api/v1/format_query": a.FormatQuery,
		"/api/v1/status/buildinfo": a.BuildInfo,
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		p := string(ctx.Path())
		if h, ok := routes[p]; ok {
			h(ctx)
		} else if strings.HasPrefix(p, "/api/v1/label/") {
			a.LabelValues(ctx)
		} else {
			ctx.SetStatusCode(404)
		}
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Shutdown()
		<-done
		a.Close()
	})
	return "http://" + ln.Addr().String()
}

// call sends a GET (params in the URL) or a POST form and returns the
// status and body.
func call(t *testing.T, method, u string, params url.Values) (int, string) {
	t.Helper()
	var resp *http.Response
	var err error
	switch method {
	case http.MethodGet:
		resp, err = http.Get(u + "?" + params.Encode())
	case http.MethodPost:
		resp, err = http.PostForm(u, params)
	default:
		req, _ := http.NewRequest(method, u+"?"+params.Encode(), nil)
		resp, err = http.DefaultClient.Do(req)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 404 && ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, u, ct)
	}
	return resp.StatusCode, string(b)
}

func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// TestQueryBodies asserts whole response bodies, byte for byte, for every
// result type and both methods.
func TestQueryBodies(t *testing.T) {
	base := serveAPI(t, openDB(t))
	for _, tc := range []struct {
		name, path string
		params     url.Values
		want       string
	}{
		{"health check", "/api/v1/query", vals("query", "1+1", "time", "4"),
			`{"status":"success","data":{"resultType":"scalar","result":[4,"2"]}}`},
		{"NaN", "/api/v1/query", vals("query", "0/0", "time", "4.5"),
			`{"status":"success","data":{"resultType":"scalar","result":[4.5,"NaN"]}}`},
		{"infinities", "/api/v1/query", vals("query", `label_replace(vector(1/0),"s","+","","") or label_replace(vector(-1/0),"s","-","","")`, "time", "1700000000.001"),
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"s":"+"},"value":[1700000000.001,"+Inf"]},{"metric":{"s":"-"},"value":[1700000000.001,"-Inf"]}]}}`},
		{"string", "/api/v1/query", vals("query", `"a\"b"`, "time", "2023-11-14T22:13:20Z"),
			`{"status":"success","data":{"resultType":"string","result":[1700000000,"a\"b"]}}`},
		{"vector", "/api/v1/query", vals("query", `temp`, "time", "1700000030"),
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"temp","host":"h1"},"value":[1700000030,"2"]}]}}`},
		{"matrix", "/api/v1/query_range", vals("query", `up{job="a"} * 2.5`, "start", "1700000000", "end", "1700000030", "step", "15s"),
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"x:1","job":"a"},"values":[[1700000000,"2.5"],[1700000015,"2.5"],[1700000030,"2.5"]]}]}}`},
		{"regex matchers, kept from the first method for the second", "/api/v1/query_range", vals("query", `up{job=~"[a].*", instance=~"x:.+"} * 2.5`, "start", "1700000000", "end", "1700000030", "step", "15s"),
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"x:1","job":"a"},"values":[[1700000000,"2.5"],[1700000015,"2.5"],[1700000030,"2.5"]]}]}}`},
		{"regex matchers, instant", "/api/v1/query", vals("query", `temp{host=~"h[0-9]+"}`, "time", "1700000030"),
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"temp","host":"h1"},"value":[1700000030,"2"]}]}}`},
		{"float step, RFC3339", "/api/v1/query_range", vals("query", `sum(up)`, "start", "2023-11-14T22:13:20.000Z", "end", "1700000001", "step", "0.5"),
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1700000000,"1"],[1700000000.500,"1"],[1700000001,"1"]]}]}}`},
		{"range vector", "/api/v1/query", vals("query", `temp[20s]`, "time", "1700000030"),
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"temp","host":"h1"},"values":[[1700000015,"1"],[1700000030,"2"]]}]}}`},
		{"limit", "/api/v1/query", vals("query", `sort(up)`, "time", "1700000000", "limit", "1"),
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","instance":"y:2","job":"b"},"value":[1700000000,"0"]}]},"warnings":["results truncated due to limit"]}`},
		{"format_query", "/api/v1/format_query", vals("query", `sum(rate(x[5m]))by(a)`),
			`{"status":"success","data":"sum by (a) (rate(x[5m]))"}`},
	} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			code, body := call(t, m, base+tc.path, tc.params)
			if code != 200 || body != tc.want {
				t.Errorf("%s %s:\n got %d %s\nwant 200 %s", tc.name, m, code, body, tc.want)
			}
		}
	}
}

// TestPrometheusPrefixAndBodyFirst: a form body value wins over the URL's.
func TestBodyParamWins(t *testing.T) {
	base := serveAPI(t, openDB(t))
	resp, err := http.PostForm(base+"/api/v1/query?query=3&time=4", vals("query", "1+1"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"status":"success","data":{"resultType":"scalar","result":[4,"2"]}}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// TestLookups covers series, labels and label values with match[].
func TestLookups(t *testing.T) {
	base := serveAPI(t, openDB(t))
	for _, tc := range []struct {
		name, path string
		params     url.Values
		want       string
	}{
		{"series", "/api/v1/series", vals("match[]", `up`, "start", "1700000000", "end", "1700000600"),
			`{"status":"success","data":[{"__name__":"up","instance":"x:1","job":"a"},{"__name__":"up","instance":"y:2","job":"b"}]}`},
		{"series two sets", "/api/v1/series", vals("match[]", `temp`, "match[]", `{job="b"}`),
			`{"status":"success","data":[{"__name__":"temp","host":"h1"},{"__name__":"up","instance":"y:2","job":"b"}]}`},
		{"series limit", "/api/v1/series", vals("match[]", `{__name__=~".+"}`, "limit", "2"),
			`{"status":"success","data":[{"__name__":"temp","host":"h1"},{"__name__":"up","instance":"x:1","job":"a"}],"warnings":["results truncated due to limit"]}`},
		{"series outside range", "/api/v1/series", vals("match[]", `up`, "start", "1600000000", "end", "1600000600"),
			`{"status":"success","data":[]}`},
		{"labels", "/api/v1/labels", vals("start", "1700000000", "end", "1700000600"),
			`{"status":"success","data":["__name__","host","instance","job"]}`},
		{"labels match", "/api/v1/labels", vals("match[]", `temp`),
			`{"status":"success","data":["__name__","host"]}`},
		{"labels two sets", "/api/v1/labels", vals("match[]", `temp`, "match[]", `up{job="a"}`),
			`{"status":"success","data":["__name__","host","instance","job"]}`},
		{"metric names", "/api/v1/label/__name__/values", vals("start", "1700000000", "end", "1700000600", "limit", "5000"),
			`{"status":"success","data":["temp","up"]}`},
		{"values match", "/api/v1/label/job/values", vals("match[]", `up{instance="y:2"}`),
			`{"status":"success","data":["b"]}`},
		{"values limit", "/api/v1/label/job/values", vals("limit", "1"),
			`{"status":"success","data":["a"],"warnings":["results truncated due to limit"]}`},
		{"escaped dots", "/api/v1/label/U__a_2e_b/values", nil, `{"status":"success","data":[]}`},
		{"values unknown", "/api/v1/label/nope/values", nil, `{"status":"success","data":[]}`},
		{"escaped name", "/api/v1/label/U__job/values", vals("match[]", `up{job="a"}`),
			`{"status":"success","data":["a"]}`},
	} {
		methods := []string{http.MethodGet, http.MethodPost}
		for _, m := range methods {
			code, body := call(t, m, base+tc.path, tc.params)
			if code != 200 || body != tc.want {
				t.Errorf("%s %s:\n got %d %s\nwant 200 %s", tc.name, m, code, body, tc.want)
			}
		}
	}
}

// TestStaticEndpoints covers what Grafana probes at start-up.
func TestStaticEndpoints(t *testing.T) {
	base := serveAPI(t, openDB(t))
	for _, tc := range []struct {
		path   string
		params url.Values
		want   string
	}{
		{"/api/v1/metadata", vals("limit", "10"), `{"status":"success","data":{}}`},
		{"/api/v1/rules", nil, `{"status":"success","data":{"groups":[]}}`},
		{"/api/v1/query_exemplars", vals("query", "test", "start", "1700000000000", "end", "1700000600000"), `{"status":"success","data":[]}`},
	} {
		if code, body := call(t, http.MethodGet, base+tc.path, tc.params); code != 200 || body != tc.want {
			t.Errorf("%s: got %d %s, want 200 %s", tc.path, code, body, tc.want)
		}
	}
	code, body := call(t, http.MethodGet, base+"/api/v1/status/buildinfo", nil)
	var bi struct {
		Status string
		Data   map[string]any
	}
	if err := json.Unmarshal([]byte(body), &bi); err != nil || code != 200 || bi.Status != "success" {
		t.Fatalf("buildinfo: %d %s %v", code, body, err)
	}
	if bi.Data["version"] != DefaultBuildVersion || bi.Data["revision"] != "abc123" {
		t.Errorf("buildinfo data %v", bi.Data)
	}
	if _, ok := bi.Data["features"]; ok {
		t.Error("buildinfo has features: Grafana would take tsd for Mimir")
	}
}

// TestBadInput: every malformed request is Prometheus's error JSON with
// the class's status, never a 500.
func TestBadInput(t *testing.T) {
	base := serveAPI(t, openDB(t))
	for _, tc := range []struct {
		name, method, path string
		params             url.Values
		code               int
		errType, msg       string
	}{
		{"unparsable query", "GET", "/api/v1/query", vals("query", "sum(up"), 400, "bad_data", `invalid parameter "query": 1:7: parse error: unclosed left parenthesis`},
		{"unknown function", "POST", "/api/v1/query", vals("query", "nope(up)"), 400, "bad_data", `invalid parameter "query": 1:1: parse error: unknown function with name "nope"`},
		{"empty query", "POST", "/api/v1/query", vals("query", ""), 400, "bad_data", `invalid parameter "query"`},
		{"bad time", "GET", "/api/v1/query", vals("query", "1", "time", "yesterday"), 400, "bad_data", `invalid parameter "time": invalid time value for 'time': cannot parse "yesterday" to a valid timestamp`},
		{"NaN time", "GET", "/api/v1/query", vals("query", "1", "time", "NaN"), 400, "bad_data", `invalid parameter "time": invalid time value for 'time': cannot parse "NaN" to a valid timestamp`},
		{"huge time", "GET", "/api/v1/query", vals("query", "1", "time", "1e300"), 400, "bad_data", `invalid parameter "time"`},
		{"bad timeout", "GET", "/api/v1/query", vals("query", "1", "timeout", "5 min"), 400, "bad_data", `invalid parameter "timeout": cannot parse "5 min" to a valid duration`},
		{"bad lookback", "GET", "/api/v1/query", vals("query", "1", "lookback_delta", "x"), 400, "bad_data", `error parsing lookback delta duration: cannot parse "x" to a valid duration`},
		{"bad limit", "GET", "/api/v1/query", vals("query", "1", "limit", "-1"), 400, "bad_data", `invalid parameter "limit": limit must be non-negative`},
		{"no start", "GET", "/api/v1/query_range", vals("query", "up", "end", "10", "step", "1"), 400, "bad_data", `invalid parameter "start": cannot parse "" to a valid timestamp`},
		{"bad step", "POST", "/api/v1/query_range", vals("query", "up", "start", "0", "end", "10", "step", "1x"), 400, "bad_data", `invalid parameter "step": cannot parse "1x" to a valid duration`},
		{"zero step", "POST", "/api/v1/query_range", vals("query", "up", "start", "0", "end", "10", "step", "0"), 400, "bad_data", `invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer`},
		{"huge step", "POST", "/api/v1/query_range", vals("query", "up", "start", "0", "end", "10", "step", "1e300"), 400, "bad_data", `invalid parameter "step": cannot parse "1e300" to a valid duration. It overflows int64`},
		{"start after end", "GET", "/api/v1/query_range", vals("query", "up", "start", "20", "end", "10", "step", "1"), 400, "bad_data", `invalid parameter "end": end timestamp must not be before start time`},
		{"too many points", "GET", "/api/v1/query_range", vals("query", "up", "start", "0", "end", "11001", "step", "1"), 400, "bad_data", "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"},
		{"range query bad expr", "POST", "/api/v1/query_range", vals("query", "up[5m]", "start", "0", "end", "10", "step", "1"), 400, "bad_data", `invalid parameter "query": invalid expression type "range vector" for range query, must be Scalar or instant Vector`},
		{"type error", "GET", "/api/v1/query", vals("query", `rate(up)`), 400, "bad_data", `expected type range vector in call to function "rate"`},
		{"series no match", "GET", "/api/v1/series", nil, 400, "bad_data", "no match[] parameter provided"},
		{"series empty matcher", "GET", "/api/v1/series", vals("match[]", `{job=""}`), 400, "bad_data", `invalid parameter "match[]": match[] must contain at least one non-empty matcher`},
		{"series bad selector", "GET", "/api/v1/series", vals("match[]", `up{`), 400, "bad_data", `invalid parameter "match[]"`},
		{"labels bad start", "GET", "/api/v1/labels", vals("start", "x"), 400, "bad_data", `invalid parameter "start"`},
		{"values bad name", "GET", "/api/v1/label/%ff/values", nil, 400, "bad_data", "invalid label name"},
		{"exemplars bad query", "GET", "/api/v1/query_exemplars", vals("query", "("), 400, "bad_data", "parse error"},
		{"exemplars end before start", "GET", "/api/v1/query_exemplars", vals("query", "up", "start", "10", "end", "5"), 400, "bad_data", "end timestamp must not be before start timestamp"},
		{"format bad", "GET", "/api/v1/format_query", vals("query", "1 +"), 400, "bad_data", `invalid parameter "query"`},
		{"method", "DELETE", "/api/v1/query", vals("query", "1"), 405, "bad_data", "method DELETE not allowed"},
		{"timeout", "GET", "/api/v1/query", vals("query", "up", "timeout", "0"), 503, "timeout", ""},
		{"execution", "GET", "/api/v1/query", vals("query", `label_replace(label_replace(up, "job", "x", "", ""), "instance", "x", "", "")`, "time", "1700000000"), 422, "execution", "vector cannot contain metrics with the same labelset"},
	} {
		code, body := call(t, tc.method, base+tc.path, tc.params)
		var e struct{ Status, ErrorType, Error string }
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Errorf("%s: body %q: %v", tc.name, body, err)
			continue
		}
		if code != tc.code || e.Status != "error" || e.ErrorType != tc.errType || !strings.Contains(e.Error, tc.msg) {
			t.Errorf("%s: got %d %s\nwant %d %s containing %q", tc.name, code, body, tc.code, tc.errType, tc.msg)
		}
	}
}

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // ms
	}{
		{"4", 4000},
		{"1700000000.123", 1700000000123},
		{"1700000000.1236", 1700000000124},
		{"-1.5", -1500},
		{"2023-11-14T22:13:20.5Z", 1700000000500},
		{"2023-11-15T00:13:20+02:00", 1700000000000},
		{minTimeText, MinTime.UnixMilli()},
		{maxTimeText, MaxTime.UnixMilli()},
	} {
		got, err := ParseTime(tc.in)
		if err != nil || got.UnixMilli() != tc.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", tc.in, got.UnixMilli(), err, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64 // seconds
	}{
		{"15", 15}, {"0.5", 0.5}, {"15s", 15}, {"1m30s", 90}, {"1h", 3600}, {"1d", 86400}, {"100ms", 0.1},
	} {
		got, err := ParseDuration(tc.in)
		if err != nil || math.Abs(got.Seconds()-tc.want) > 1e-9 {
			t.Errorf("ParseDuration(%q) = %v, %v; want %vs", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "1x", "NaN", "1e19", "-1e19", "s"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		}
	}
}

func TestAppendTimestamp(t *testing.T) {
	for ms, want := range map[int64]string{0: "0", 4000: "4", 1500: "1.500", 1001: "1.001", 1010: "1.010", -1500: "-1.500", -4000: "-4",
		1767268740000: "1767268740", 1767999999500: "1767999999.500"} {
		if got := string(appendTimestamp(nil, new(jsonw.Stamps), ms)); got != want {
			t.Errorf("appendTimestamp(%d) = %s, want %s", ms, got, want)
		}
	}
	// One Stamps over a series' times, across the millions it caches,
	// writes what strconv does.
	var st jsonw.Stamps
	for _, ms := range []int64{1767268740000, 1767268800000, 1767999999500, 1768000000000, 1768000000250, 999999000, 1000000000, -1500, 1767268740000} {
		want := strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)
		if ms%1000 != 0 {
			want = strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
		}
		if got := string(appendTimestamp(nil, &st, ms)); got != want {
			t.Errorf("appendTimestamp(%d) with Stamps = %s, want %s", ms, got, want)
		}
	}
}

// panicQueryable panics in Querier, as a bug below the API would.
type panicQueryable struct{}

func (panicQueryable) Querier(int64, int64) (storage.Querier, error) { panic("boom") }

// TestHandlerRecovers: a panic below the API is a 500 "internal" answer,
// and the server keeps serving.
func TestHandlerRecovers(t *testing.T) {
	a := New(Options{Queryable: panicQueryable{}, Logger: slog.New(slog.DiscardHandler)})
	c := serveInMemory(t, a.Handler((*API).Labels))
	for range 2 {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://promapi/api/v1/labels")
		if err := c.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		want := `{"status":"error","errorType":"internal","error":"internal error: boom"}`
		if resp.StatusCode() != 500 || string(resp.Body()) != want {
			t.Errorf("= %d %s, want 500 %s", resp.StatusCode(), resp.Body(), want)
		}
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	}
}
