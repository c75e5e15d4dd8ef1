package promapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"
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
		if got := string(appendHTMLString(nil, in)); got != want {
			t.Errorf("appendHTMLString(%q) = %s, want %s", in, got, want)
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
