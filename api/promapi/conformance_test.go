package promapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// The expected bodies in this file are written from Prometheus
// v0.310.0's own encoder and handlers (web/api/v1/api.go,
// web/api/v1/json_codec.go, util/jsonutil/marshal.go, promql/value.go),
// not from tsd's output: the function each case follows is named beside
// it.

// openHTMLDB opens a tsdb with one series whose label value holds the
// characters jsoniter's standard-library mode escapes in strings but not
// in label maps: h{v="x<y&z"} = 1 at 1700000000 s.
func openHTMLDB(t *testing.T) *tsdb.DB {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), slog.New(slog.DiscardHandler), nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app := db.Appender(context.Background())
	if _, err := app.Append(0, labels.FromStrings("__name__", "h", "v", "x<y&z"), t0, 1); err != nil {
		t.Fatal(err)
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

type bodyCase struct {
	name, path string
	params     url.Values
	code       int
	want       string
}

func checkBodies(t *testing.T, base string, cases []bodyCase) {
	t.Helper()
	for _, tc := range cases {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			code, body := call(t, m, base+tc.path, tc.params)
			if code != tc.code || body != tc.want {
				t.Errorf("%s %s:\n got %d %s\nwant %d %s", tc.name, m, code, body, tc.code, tc.want)
			}
		}
	}
}

// TestConformanceValues: sample values as jsonutil.MarshalFloat writes
// them ('e' below 1e-6 and from 1e21 up, else 'f'), scalars and strings
// as promql.Scalar.MarshalJSON and promql.String.MarshalJSON do
// (encoding/json: the timestamp is float64(T)/1000 in shortest form, the
// scalar's value always 'f', the string HTML-escaped).
func TestConformanceValues(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	vec := func(v string) string {
		return `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[4,"` + v + `"]}]}}`
	}
	checkBodies(t, base, []bodyCase{
		{"tiny", "/api/v1/query", vals("query", "vector(1e-7)", "time", "4"), 200, vec("1e-07")},
		{"tiny negative", "/api/v1/query", vals("query", "vector(-1.5e-7)", "time", "4"), 200, vec("-1.5e-07")},
		{"1e-6 stays f", "/api/v1/query", vals("query", "vector(1e-6)", "time", "4"), 200, vec("0.000001")},
		{"huge", "/api/v1/query", vals("query", "vector(1e21)", "time", "4"), 200, vec("1e+21")},
		{"below 1e21 stays f", "/api/v1/query", vals("query", "vector(9.5e20)", "time", "4"), 200, vec("950000000000000000000")},
		{"matrix tiny", "/api/v1/query_range", vals("query", "vector(2e-9)", "start", "4", "end", "4", "step", "1"), 200,
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[4,"2e-09"]]}]}}`},
		{"scalar f and short time", "/api/v1/query", vals("query", "1e-7", "time", "4.1"), 200,
			`{"status":"success","data":{"resultType":"scalar","result":[4.1,"0.0000001"]}}`},
		{"scalar NaN", "/api/v1/query", vals("query", "0/0", "time", "4.5"), 200,
			`{"status":"success","data":{"resultType":"scalar","result":[4.5,"NaN"]}}`},
		{"scalar huge", "/api/v1/query", vals("query", "1e21", "time", "1700000000.12"), 200,
			`{"status":"success","data":{"resultType":"scalar","result":[1700000000.12,"1000000000000000000000"]}}`},
		{"string escaped", "/api/v1/query", vals("query", `"a<b&c>"`, "time", "4.25"), 200,
			`{"status":"success","data":{"resultType":"string","result":[4.25,"a\u003cb\u0026c\u003e"]}}`},
	})
}

// TestConformanceStrings: jsoniter's standard-library mode escapes <, >
// and & in plain strings (label name and value lists, format_query,
// error messages) but marshalLabelsJSON writes label maps with
// Stream.WriteString, which does not.
func TestConformanceStrings(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	checkBodies(t, base, []bodyCase{
		{"label values", "/api/v1/label/v/values", nil, 200, `{"status":"success","data":["x\u003cy\u0026z"]}`},
		{"series", "/api/v1/series", vals("match[]", "h"), 200, `{"status":"success","data":[{"__name__":"h","v":"x<y&z"}]}`},
		{"vector labels", "/api/v1/query", vals("query", "h", "time", "1700000000"), 200,
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"h","v":"x<y&z"},"value":[1700000000,"1"]}]}}`},
		{"format_query", "/api/v1/format_query", vals("query", "a>b"), 200, `{"status":"success","data":"a \u003e b"}`},
		{"error", "/api/v1/query_range", vals("query", "1", "start", "<x>", "end", "1", "step", "1"), 400,
			`{"status":"error","errorType":"bad_data","error":"invalid parameter \"start\": cannot parse \"\u003cx\u003e\" to a valid timestamp"}`},
	})
}

// TestAppendHTMLString follows jsoniter's writeStringSlowPathWithHTMLEscaped.
func TestAppendHTMLString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          `"plain"`,
		"<&>":            `"\u003c\u0026\u003e"`,
		"a\"b\\c":        `"a\"b\\c"`,
		"\n\r\t\b\f\x01": `"\n\r\t\u0008\u000c\u0001"`,
		"\u2028\u2029é":  `"\u2028\u2029é"`,
		"a\xffb\x7f":     "\"a\\ufffdb\x7f\"",
	} {
		if got := string(jsonw.HTML.AppendString(nil, in)); got != want {
			t.Errorf("jsonw.HTML.AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestSeriesWithoutPoints: marshalSeriesJSON writes "values" and
// "histograms" only when they have points.
func TestSeriesWithoutPoints(t *testing.T) {
	m := promql.Matrix{{Metric: labels.FromStrings("a", "b")}}
	if got, want := string(appendMatrix(nil, m)), `[{"metric":{"a":"b"}}]`; got != want {
		t.Errorf("appendMatrix = %s, want %s", got, want)
	}
}

// TestConformanceParamErrors: parseTimeParam wraps its error ("invalid
// time value for 'time': ...") for the optional times of query, labels,
// label values, series and query_exemplars, but query_range's required
// start and end go through parseTime alone; extractQueryOpts answers a bad
// lookback_delta with bad_data "error parsing lookback delta duration"
// and no parameter prefix.
func TestConformanceParamErrors(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	bad := func(msg string) string {
		return `{"status":"error","errorType":"bad_data","error":"` + msg + `"}`
	}
	checkBodies(t, base, []bodyCase{
		{"query time", "/api/v1/query", vals("query", "1", "time", "yesterday"), 400,
			bad(`invalid parameter \"time\": invalid time value for 'time': cannot parse \"yesterday\" to a valid timestamp`)},
		{"labels start", "/api/v1/labels", vals("start", "x"), 400,
			bad(`invalid parameter \"start\": invalid time value for 'start': cannot parse \"x\" to a valid timestamp`)},
		{"values end", "/api/v1/label/v/values", vals("end", "x"), 400,
			bad(`invalid parameter \"end\": invalid time value for 'end': cannot parse \"x\" to a valid timestamp`)},
		{"series end", "/api/v1/series", vals("match[]", "h", "end", "x"), 400,
			bad(`invalid parameter \"end\": invalid time value for 'end': cannot parse \"x\" to a valid timestamp`)},
		{"exemplars start", "/api/v1/query_exemplars", vals("query", "h", "start", "x"), 400,
			bad(`invalid parameter \"start\": invalid time value for 'start': cannot parse \"x\" to a valid timestamp`)},
		{"range start", "/api/v1/query_range", vals("query", "1", "start", "x", "end", "1", "step", "1"), 400,
			bad(`invalid parameter \"start\": cannot parse \"x\" to a valid timestamp`)},
		{"lookback", "/api/v1/query", vals("query", "1", "lookback_delta", "x"), 400,
			bad(`error parsing lookback delta duration: cannot parse \"x\" to a valid duration`)},
		{"range lookback", "/api/v1/query_range", vals("query", "1", "start", "1", "end", "1", "step", "1", "lookback_delta", "5 min"), 400,
			bad(`error parsing lookback delta duration: cannot parse \"5 min\" to a valid duration`)},
	})
}

// faultQueryable serves a real tsdb but fails every look-up with err and
// a warning, as a storage backend that answers partly and then fails
// would.
type faultQueryable struct {
	storage.Queryable
	err error
}

func (f faultQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := f.Queryable.Querier(mint, maxt)
	return faultQuerier{q, f.err}, err
}

type faultQuerier struct {
	storage.Querier
	err error
}

func faultWarnings() annotations.Annotations {
	var a annotations.Annotations
	return a.Add(errors.New("partial answer"))
}

func (f faultQuerier) LabelNames(context.Context, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, faultWarnings(), f.err
}

func (f faultQuerier) LabelValues(context.Context, string, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, faultWarnings(), f.err
}

func (f faultQuerier) Select(context.Context, bool, *storage.SelectHints, ...*labels.Matcher) storage.SeriesSet {
	return faultSet{f.err}
}

type faultSet struct{ err error }

func (faultSet) Next() bool                        { return false }
func (faultSet) At() storage.Series                { return nil }
func (s faultSet) Err() error                      { return s.err }
func (faultSet) Warnings() annotations.Annotations { return faultWarnings() }

// TestConformanceErrorEnvelope: respondError writes status, errorType and
// error only, never the warnings gathered before the failure; labelNames
// (one match[] set) and labelValues answer every storage error as
// "execution", series through returnAPIError (a canceled context is
// "canceled", 499).
func TestConformanceErrorEnvelope(t *testing.T) {
	base := serveAPI(t, faultQueryable{openHTMLDB(t), errors.New("disk on fire")})
	exec := `{"status":"error","errorType":"execution","error":"disk on fire"}`
	checkBodies(t, base, []bodyCase{
		{"labels", "/api/v1/labels", nil, 422, exec},
		{"values", "/api/v1/label/v/values", nil, 422, exec},
		{"series", "/api/v1/series", vals("match[]", "h"), 422, exec},
		{"query", "/api/v1/query", vals("query", "h", "time", "1700000000"), 422, `{"status":"error","errorType":"execution","error":"expanding series: disk on fire"}`},
	})
	base = serveAPI(t, faultQueryable{openHTMLDB(t), context.Canceled})
	checkBodies(t, base, []bodyCase{
		{"labels canceled", "/api/v1/labels", nil, 422, `{"status":"error","errorType":"execution","error":"context canceled"}`},
		{"values canceled", "/api/v1/label/v/values", nil, 422, `{"status":"error","errorType":"execution","error":"context canceled"}`},
		{"series canceled", "/api/v1/series", vals("match[]", "h"), 499, `{"status":"error","errorType":"canceled","error":"context canceled"}`},
	})
}

// statsRE is the data Prometheus answers with stats=<anything>: QueryData
// with "stats" after "result", the stats.BuiltinStats of NewQueryStats
// (DefaultStatsRenderer); timings vary, sample counts do not.
var statsRE = regexp.MustCompile(`^\{"status":"success","data":\{"resultType":"vector","result":\[.*\],"stats":\{"timings":\{` +
	`"evalTotalTime":[-+.e0-9]+,"resultSortTime":[-+.e0-9]+,"queryPreparationTime":[-+.e0-9]+,"innerEvalTime":[-+.e0-9]+,` +
	`"execQueueTime":[-+.e0-9]+,"execTotalTime":[-+.e0-9]+\},"samples":\{"totalQueryableSamples":1,"peakSamples":1\}\}\}\}$`)

// TestConformanceStats: the stats parameter adds query statistics to the
// answer of query and query_range; empty or absent, it adds nothing.
func TestConformanceStats(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	for _, p := range []url.Values{
		vals("query", "h", "time", "1700000000", "stats", "1"),
		vals("query", "h", "time", "1700000000", "stats", "all"),
	} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			if code, body := call(t, m, base+"/api/v1/query", p); code != 200 || !statsRE.MatchString(body) {
				t.Errorf("%s %v: got %d %s\nwant a match for %s", m, p, code, body, statsRE)
			}
		}
	}
	code, body := call(t, http.MethodGet, base+"/api/v1/query_range", vals("query", "h", "start", "1700000000", "end", "1700000000", "step", "1", "stats", "x"))
	if code != 200 || !strings.Contains(body, `"samples":{"totalQueryableSamples":1,"peakSamples":1}`) {
		t.Errorf("query_range stats: got %d %s", code, body)
	}
	checkBodies(t, base, []bodyCase{{"no stats", "/api/v1/query", vals("query", "h", "time", "1700000000", "stats", ""), 200,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"h","v":"x<y&z"},"value":[1700000000,"1"]}]}}`}})
}

// TestConformanceStaticParams: metricMetadata and rules check their
// parameters before answering from their (here empty) sources.
func TestConformanceStaticParams(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	bad := func(msg string) string {
		return `{"status":"error","errorType":"bad_data","error":"` + msg + `"}`
	}
	checkBodies(t, base, []bodyCase{
		{"metadata limit", "/api/v1/metadata", vals("limit", "x"), 400, bad("limit must be a number")},
		{"metadata limit_per_metric", "/api/v1/metadata", vals("limit", "-1", "limit_per_metric", "1.5"), 400, bad("limit_per_metric must be a number")},
		{"metadata ok", "/api/v1/metadata", vals("limit", "-1", "limit_per_metric", "2", "metric", "up"), 200, `{"status":"success","data":{}}`},
		{"rules match", "/api/v1/rules", vals("match[]", `{job=""}`), 400, bad("match[] must contain at least one non-empty matcher")},
	})
	for _, tc := range []struct {
		query string
		code  int
		want  string
	}{
		{"type=ALERT&exclude_alerts=TRUE&rule_name[]=x&rule_group[]=y&file[]=z", 200, `{"status":"success","data":{"groups":[]}}`},
		{"type=record&group_limit=5", 200, `{"status":"success","data":{"groups":[]}}`},
		{"type=recording", 400, bad(`invalid parameter \"type\": not supported value \"recording\"`)},
		{"exclude_alerts=maybe", 400, bad(`invalid parameter \"exclude_alerts\": error converting exclude_alerts: strconv.ParseBool: parsing \"maybe\": invalid syntax`)},
		{"group_next_token=abc", 400, bad(`invalid parameter \"group_next_token\": group_limit needs to be present in order to paginate over the groups`)},
		{"group_limit=x", 400, bad(`invalid parameter \"group_limit\": group_limit needs to be a valid number: strconv.ParseInt: parsing \"x\": invalid syntax`)},
		{"group_limit=0", 400, bad(`invalid parameter \"group_limit\": group_limit needs to be greater than 0`)},
		{"group_limit=2&group_next_token=abc", 400, bad(`invalid parameter \"group_next_token\": invalid group_next_token 'abc'. were rule groups changed?`)},
	} {
		resp, err := http.Get(base + "/api/v1/rules?" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || string(b) != tc.want {
			t.Errorf("rules?%s: got %d %s\nwant %d %s", tc.query, resp.StatusCode, b, tc.code, tc.want)
		}
	}
}

// TestConformanceExemplarsNoSelector: queryExemplars returns no data for
// a query without selectors, which Register's wrapper answers 204 with
// an empty body.
func TestConformanceExemplarsNoSelector(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	for _, q := range []string{"1+1", `vector(1)`} {
		resp, err := http.Get(base + "/api/v1/query_exemplars?" + vals("query", q).Encode())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || len(b) != 0 {
			t.Errorf("query_exemplars %s: got %d %q, want 204 and no body", q, resp.StatusCode, b)
		}
	}
}

// TestConformanceCORS: Register's wrapper calls httputil.SetCORS before
// every handler (Prometheus's default --web.cors.origin ".*"): always
// "Vary: Origin", and for a request with an Origin the three CORS headers
// and "Access-Control-Allow-Origin: *", errors included; OPTIONS on any
// API path is 204 with no body.
func TestConformanceCORS(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	for _, tc := range []struct {
		method, path, origin string
		code                 int
	}{
		{"GET", "/api/v1/labels", "http://app.example", 200},
		{"GET", "/api/v1/labels?start=x", "http://app.example", 400},
		{"OPTIONS", "/api/v1/query_range", "http://app.example", 204},
		{"OPTIONS", "/api/v1/label/job/values", "http://app.example", 204},
		{"GET", "/api/v1/labels", "", 200},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		want := map[string]string{
			"Vary":                          "Origin",
			"Access-Control-Allow-Origin":   "*",
			"Access-Control-Allow-Headers":  "Accept, Authorization, Content-Type, Origin",
			"Access-Control-Allow-Methods":  "GET, POST, OPTIONS",
			"Access-Control-Expose-Headers": "Date",
		}
		if tc.origin == "" {
			want = map[string]string{"Vary": "Origin", "Access-Control-Allow-Origin": ""}
		}
		for k, v := range want {
			if got := h.Get(k); got != v {
				t.Errorf("%s %s origin %q: %s = %q, want %q", tc.method, tc.path, tc.origin, k, got, v)
			}
		}
		if resp.StatusCode != tc.code || (tc.code == 204 && len(b) != 0) {
			t.Errorf("%s %s: got %d %q, want %d", tc.method, tc.path, resp.StatusCode, b, tc.code)
		}
	}
}

// TestConformanceSubqueryDefaultStep: a subquery without a step uses the
// global evaluation interval, 1m by default (cmd/prometheus sets the
// engine's NoStepSubqueryIntervalFn from it); the engine New builds must
// have one too.
func TestConformanceSubqueryDefaultStep(t *testing.T) {
	a := New(Options{Queryable: openDB(t), Logger: slog.New(slog.DiscardHandler)})
	defer a.Close()
	c := serveInMemory(t, a.Handler((*API).Query))
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://promapi/api/v1/query?" + vals("query", "max_over_time(temp[1m:])", "time", "1700000060").Encode())
	if err := c.Do(req, resp); err != nil {
		t.Fatal(err)
	}
	// One subquery step in (1700000000, 1700000060], at 1700000040 (a
	// multiple of 1m), where temp's last sample (1700000030) is 2.
	want := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"host":"h1"},"value":[1700000060,"2"]}]}}`
	if resp.StatusCode() != 200 || string(resp.Body()) != want {
		t.Errorf("got %d %s\nwant 200 %s", resp.StatusCode(), resp.Body(), want)
	}
}

// TestConformanceOpenRange: client_golang sends Prometheus's MinTime and
// MaxTime as RFC 3339 for an open range; parseTime takes them by their
// exact text (Go's parser refuses their years).
func TestConformanceOpenRange(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	open := vals("start", "-292273086-05-16T16:47:06Z", "end", "292277025-08-18T07:12:54.999999999Z")
	checkBodies(t, base, []bodyCase{
		{"labels", "/api/v1/labels", open, 200, `{"status":"success","data":["__name__","v"]}`},
		{"series", "/api/v1/series", url.Values{"match[]": {"h"}, "start": open["start"], "end": open["end"]}, 200,
			`{"status":"success","data":[{"__name__":"h","v":"x<y&z"}]}`},
		{"range", "/api/v1/query_range", url.Values{"query": {"h"}, "start": open["start"], "end": open["end"], "step": {"1"}}, 400,
			`{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"}`},
	})
}

// postMultipart posts params as multipart/form-data (curl -F) to u.
func postMultipart(t *testing.T, u string, params url.Values) (int, string) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, vs := range params {
		for _, v := range vs {
			if err := w.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(u, w.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConformanceMultipart: Prometheus reads parameters with
// http.Request.FormValue, which parses a multipart/form-data body too
// (ParseMultipartForm), its values after the URL's.
func TestConformanceMultipart(t *testing.T) {
	base := serveAPI(t, openHTMLDB(t))
	for _, tc := range []struct {
		path   string
		params url.Values
		want   string
	}{
		{"/api/v1/query", vals("query", "1+1", "time", "4"), `{"status":"success","data":{"resultType":"scalar","result":[4,"2"]}}`},
		{"/api/v1/query?query=3", vals("query", "1+1", "time", "4"), `{"status":"success","data":{"resultType":"scalar","result":[4,"3"]}}`},
		{"/api/v1/query_range", vals("query", "h", "start", "1700000000", "end", "1700000000", "step", "15s"),
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"h","v":"x<y&z"},"values":[[1700000000,"1"]]}]}}`},
		{"/api/v1/labels", vals("match[]", `{v="nope"}`), `{"status":"success","data":[]}`},
		{"/api/v1/series", vals("match[]", "h"), `{"status":"success","data":[{"__name__":"h","v":"x<y&z"}]}`},
	} {
		if code, body := postMultipart(t, base+tc.path, tc.params); code != 200 || body != tc.want {
			t.Errorf("multipart %s %v: got %d %s\nwant 200 %s", tc.path, tc.params, code, body, tc.want)
		}
	}
}

// warnQueryable serves a real tsdb whose label look-ups also return ten
// warnings, as a federated backend reporting partial answers would.
type warnQueryable struct{ storage.Queryable }

func (w warnQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := w.Queryable.Querier(mint, maxt)
	return warnQuerier{q}, err
}

type warnQuerier struct{ storage.Querier }

func (w warnQuerier) LabelNames(ctx context.Context, h *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	names, _, err := w.Querier.LabelNames(ctx, h, ms...)
	var a annotations.Annotations
	for i := range 10 {
		a.Add(fmt.Errorf("partial answer %d", i))
	}
	return names, a, err
}

// TestConformanceTruncationNotice: Prometheus adds "results truncated
// due to limit" to the annotations before respond caps them at ten
// (Annotations.AsStrings), so with ten warnings already the notice is
// among the omitted.
func TestConformanceTruncationNotice(t *testing.T) {
	base := serveAPI(t, warnQueryable{openHTMLDB(t)})
	code, body := call(t, http.MethodGet, base+"/api/v1/labels", vals("limit", "1"))
	var r struct {
		Data     []string
		Warnings []string
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || code != 200 {
		t.Fatalf("got %d %s: %v", code, body, err)
	}
	n := len(r.Warnings)
	if n != 11 || r.Warnings[n-1] != "1 more warning annotations omitted" || !slices.Equal(r.Data, []string{"__name__"}) {
		t.Errorf("got %s, want ten of the eleven warnings and \"1 more warning annotations omitted\"", body)
	}
}
