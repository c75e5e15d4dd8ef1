//go:build !race

// Not built under -race: Prometheus's tsdb, the reference store here, pulls
// its remote-write auth clients (AWS, Azure, Google) into the race build;
// these routes are checked in the plain go test step.

package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/api/promapi"
)

// promDB is a Prometheus tsdb with up{job="a"} = 1 at 1700000000 s.
func promDB(t *testing.T) *tsdb.DB {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), slog.New(slog.DiscardHandler), nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app := db.Appender(context.Background())
	if _, err := app.Append(0, labels.FromStrings("__name__", "up", "job", "a"), 1_700_000_000_000, 1); err != nil {
		t.Fatal(err)
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestPromRoutes: the Prometheus paths reach package promapi, also under
// /prometheus; /api/v1/query without a query parameter is OpenTSDB's.
func TestPromRoutes(t *testing.T) {
	_, base := startServer(t, Options{PromQL: promapi.Options{Queryable: promDB(t)}})
	q := url.Values{"query": {"up"}, "time": {"1700000000"}}.Encode()
	vector := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"a"},"value":[1700000000,"1"]}]}}`
	opentsdb501 := `{"error":{"code":501,"message":"Endpoint not implemented: /api/query"}}`
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/api/v1/query?" + q, "", 200, vector},
		{"GET", "/prometheus/api/v1/query?" + q, "", 200, vector},
		{"GET", "/prometheus/api/v1/label/job/values", "", 200, `{"status":"success","data":["a"]}`},
		{"GET", "/prometheus/api/v1/status/buildinfo", "", 200, ""},
		{"GET", "/api/v1/query_range?query=1&start=0&end=11001&step=1", "", 400,
			`{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"}`},
		{"GET", "/api/v1/query?m=sum:up&start=1h-ago", "", 501, opentsdb501},
		{"GET", "/api/v1/query?tsuid=000001000001000001", "", 501, opentsdb501},
		{"POST", "/api/v1/query", `{"start":"1h-ago","queries":[{"metric":"up","aggregator":"sum"}]}`, 501, opentsdb501},
	} {
		code, _, body := do(t, tc.method, base+tc.path, tc.body)
		if code != tc.code || (tc.want != "" && body != tc.want) {
			t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}
}

// TestPromPlanned: without a Queryable the Prometheus paths answer 501.
func TestPromPlanned(t *testing.T) {
	_, base := startServer(t, Options{})
	code, _, body := do(t, "GET", base+"/prometheus/api/v1/query?query=1", "")
	if want := `{"error":{"code":501,"message":"Endpoint not implemented: /api/v1/query"}}`; code != 501 || body != want {
		t.Errorf("= %d %s, want 501 %s", code, body, want)
	}
}

// TestPromGzip: an answer of a packet or more is gzipped, on the
// request's goroutine, when the client accepts it; a shorter one goes as
// it is.
func TestPromGzip(t *testing.T) {
	_, base := startServer(t, Options{PromQL: promapi.Options{Queryable: promDB(t)}})
	get := func(end int) *http.Response {
		req, err := http.NewRequest("GET", base+"/api/v1/query_range?query=up&start=1700000000&end="+strconv.Itoa(end)+"&step=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get(1700000120)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("= %d, Content-Encoding %q, Vary %q", resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Values("Vary"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","job":"a"},"values":[[1700000000,"1"],[1700000001,"1"]`
	if !strings.HasPrefix(string(b), want) || len(b) < answer.MinGzip {
		t.Errorf("body %s, want it to start %s and hold at least %d bytes", b, want, answer.MinGzip)
	}
	resp = get(1700000002)
	b, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(string(b), want) || len(b) >= answer.MinGzip {
		t.Errorf("short answer = %d, Content-Encoding %q, %d bytes: %s", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(b), b)
	}
}

// TestPromQueryFormBody: a query parameter in a form body (Grafana's
// POST) also makes /api/v1/query Prometheus's.
func TestPromQueryFormBody(t *testing.T) {
	_, base := startServer(t, Options{PromQL: promapi.Options{Queryable: promDB(t)}})
	resp, err := http.PostForm(base+"/api/v1/query", url.Values{"query": {"1+1"}, "time": {"4"}})
	wantOnePlusOne(t, resp, err)
}

// wantOnePlusOne checks the answer to the instant query 1+1 at time 4.
func wantOnePlusOne(t *testing.T, resp *http.Response, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if want := `{"status":"success","data":{"resultType":"scalar","result":[4,"2"]}}`; resp.StatusCode != 200 || string(b) != want {
		t.Errorf("= %d %s, want 200 %s", resp.StatusCode, b, want)
	}
}

// TestPromPreflight: a browser's CORS preflight reaches the Prometheus
// API on every path, /api/v1/query included (it carries no query
// parameter), and is answered 204 with Prometheus's CORS headers.
func TestPromPreflight(t *testing.T) {
	_, base := startServer(t, Options{PromQL: promapi.Options{Queryable: promDB(t)}})
	for _, path := range []string{"/api/v1/query", "/prometheus/api/v1/query", "/api/v1/query_range", "/prometheus/api/v1/series"} {
		req, err := http.NewRequest("OPTIONS", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "http://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 204 || len(b) != 0 || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
			resp.Header.Get("Access-Control-Allow-Methods") != "GET, POST, OPTIONS" {
			t.Errorf("OPTIONS %s = %d %q, headers %v", path, resp.StatusCode, b, resp.Header)
		}
	}
}

// TestPromQueryMultipart: a query parameter in a multipart/form-data body
// (curl -F, which Prometheus's FormValue reads) also makes /api/v1/query
// Prometheus's.
func TestPromQueryMultipart(t *testing.T) {
	_, base := startServer(t, Options{PromQL: promapi.Options{Queryable: promDB(t)}})
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if err := w.WriteField("query", "1+1"); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteField("time", "4"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	resp, err := http.Post(base+"/api/v1/query", w.FormDataContentType(), &body)
	wantOnePlusOne(t, resp, err)
}
