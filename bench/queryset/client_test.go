package queryset

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// queryServer is a tiny real HTTP server that checks each request the way a
// server would parse it and answers an empty result.
type queryServer struct {
	opentsdb, promql atomic.Int64
	bad              atomic.Value
}

func (s *queryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/query":
		var req Request
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || req.End <= req.Start || len(req.Queries) == 0 {
			s.fail(w, "bad opentsdb body: "+string(body))
			return
		}
		s.opentsdb.Add(1)
		w.Write([]byte("[]"))
	case "/api/v1/query_range":
		q := r.URL.Query()
		start, _ := strconv.ParseInt(q.Get("start"), 10, 64)
		end, _ := strconv.ParseInt(q.Get("end"), 10, 64)
		step, _ := strconv.ParseFloat(q.Get("step"), 64)
		if _, err := parser.ParseExpr(q.Get("query")); err != nil || end <= start || step <= 0 {
			s.fail(w, "bad promql request: "+r.URL.RawQuery)
			return
		}
		s.promql.Add(1)
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	default:
		http.NotFound(w, r)
	}
}

func (s *queryServer) fail(w http.ResponseWriter, msg string) {
	s.bad.CompareAndSwap(nil, msg)
	http.Error(w, msg, http.StatusBadRequest)
}

func TestClientAgainstServer(t *testing.T) {
	srv := &queryServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &Client{Base: ts.URL}
	end := End(24 * time.Hour)
	exprs := 0
	for i := range Set {
		q := &Set[i]
		exprs += len(q.PromQL)
		for _, api := range []API{OpenTSDB, PromQL} {
			s := c.Repeat(context.Background(), api, q, end, 3)
			if s.Errors != 0 || s.Runs != 3 || s.P50 <= 0 || s.P99 < s.P50 || s.Mean <= 0 {
				t.Fatalf("%s %s: %+v", q.Name, api, s)
			}
		}
	}
	if b := srv.bad.Load(); b != nil {
		t.Fatal(b)
	}
	if srv.opentsdb.Load() != int64(3*len(Set)) || srv.promql.Load() != int64(3*exprs) {
		t.Fatalf("server saw %d opentsdb and %d promql requests", srv.opentsdb.Load(), srv.promql.Load())
	}
	// Cycle: 5 runs over two queries, one request each, Max the slowest.
	qs := []*Query{&Set[0], &Set[1]}
	before := srv.opentsdb.Load()
	s := c.Cycle(context.Background(), OpenTSDB, qs, end, 5)
	if s.Errors != 0 || s.Runs != 5 || s.Max < s.P99 || s.P99 < s.P50 || s.P50 <= 0 {
		t.Fatalf("Cycle: %+v", s)
	}
	if n := srv.opentsdb.Load() - before; n != 5 {
		t.Fatalf("Cycle sent %d requests, want 5", n)
	}
}

func TestClientErrors(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	c := &Client{Base: ts.URL}
	s := c.Repeat(context.Background(), PromQL, &Set[0], End(time.Hour*24), 2)
	if s.Errors != 2 || s.FirstError == nil || s.P50 != 0 {
		t.Fatalf("stats %+v", s)
	}
	if _, err := c.Do(context.Background(), "sql", &Set[0], time.Now()); err == nil {
		t.Fatal("unknown api accepted")
	}
}

// TestConnChunkedAndClose checks the keep-alive connection against Go's
// server: a chunked answer, a Content-Length one, and a server that closes
// the connection after answering (the next request redials).
func TestConnChunkedAndClose(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	var dials atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			w.Write([]byte(big[:50_000])) // over the server's buffer: chunked
			w.(http.Flusher).Flush()
			w.Write([]byte(big[50_000:]))
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye"))
		default:
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body)
		}
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	c := &conn{addr: strings.TrimPrefix(ts.URL, "http://")}
	defer c.close()
	ctx := context.Background()
	for i, tc := range []struct {
		method, target, body, want string
	}{
		{"GET", "/chunked", "", big}, {"POST", "/echo", "hello", "hello"},
		{"GET", "/close", "", "bye"}, {"POST", "/echo", "again", "again"}, {"GET", "/chunked", "", big},
	} {
		var body []byte
		if tc.body != "" {
			body = []byte(tc.body)
		}
		status, got, err := c.do(ctx, tc.method, tc.target, jsonType, body)
		if err != nil || status != 200 || string(got) != tc.want {
			t.Fatalf("request %d %s: status %d, %d bytes, err %v", i, tc.target, status, len(got), err)
		}
	}
	if n := dials.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (one redial after the close)", n)
	}
}

// TestInterleave: runs alternate between the two servers one at a time,
// queries and floors alike, and each side's stats count its own runs.
func TestInterleave(t *testing.T) {
	var (
		mu  sync.Mutex
		seq []byte
	)
	server := func(name byte) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seq = append(seq, name)
			mu.Unlock()
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		}))
	}
	a, b := server('a'), server('b')
	defer a.Close()
	defer b.Close()
	ca, cb := &Client{Base: a.URL}, &Client{Base: b.URL}
	defer ca.Close()
	defer cb.Close()
	ctx := context.Background()
	fa, fb := InterleaveFloor(ctx, ca, cb, 2)
	q := &Set[0] // single-1h: one expression
	sa, sb := Interleave(ctx, ca, cb, PromQL, q, End(24*time.Hour), 3)
	if got := string(seq); got != "ababababab" {
		t.Fatalf("request order %q, want the two servers in turn", got)
	}
	for _, s := range []Stats{fa, fb, sa, sb} {
		if s.Errors != 0 || s.Mean <= 0 || s.P99 < s.P50 {
			t.Fatalf("stats %+v", s)
		}
	}
	if fa.Runs != 2 || sa.Runs != 3 || sb.Runs != 3 {
		t.Fatalf("runs: floor %d, queries %d and %d", fa.Runs, sa.Runs, sb.Runs)
	}
}

// TestGrafanaClient: Grafana's client POSTs the range parameters as a
// form, asks for gzip and reads a gzipped answer; the lean client with
// Form sends the same form on its own connection.
func TestGrafanaClient(t *testing.T) {
	q := &Set[0]
	end := End(24 * time.Hour)
	want := promParams(q, q.PromQL[0], end)
	var gzipped atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != rangePath || r.Header.Get("Content-Type") != formType {
			http.Error(w, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"), 400)
			return
		}
		if err := r.ParseForm(); err != nil || r.PostForm.Encode() != want.Encode() {
			http.Error(w, "form "+r.PostForm.Encode(), 400)
			return
		}
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
			return
		}
		gzipped.Add(1)
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		zw.Close()
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, c := range []*Client{Grafana(srv.URL), {Base: srv.URL, Form: true}} {
		if _, err := c.Do(ctx, PromQL, q, end); err != nil {
			t.Fatalf("Form %v, net/http %v: %v", c.Form, c.HTTP != nil, err)
		}
		c.Close()
	}
	if gzipped.Load() != 1 {
		t.Fatalf("%d gzipped answers, want Grafana's client's one", gzipped.Load())
	}
}
