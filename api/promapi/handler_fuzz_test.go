package promapi

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// FuzzQueryRange runs arbitrary query_range parameters through the
// handler in process: every answer is Prometheus's JSON with a status of
// its class, never a 500 or a panic.
func FuzzQueryRange(f *testing.F) {
	for _, s := range [][4]string{
		{"up", "1700000000", "1700000600", "15"},
		{"sum by (job) (rate(up[1m]))", "2023-11-14T22:13:20Z", "1700000600", "1m"},
		{"temp @ end()", "1700000000", "1700000060", "0.5"},
		{"sum(up", "0", "10", "1"},
		{"up", "20", "10", "1"},
		{"up", "0", "11001", "1"},
		{"up", "-9e15", "9e15", "1e-9"},
		{"label_replace(up, \"job\", \"x\", \"\", \"\")", "1700000000", "1700000600", "60"},
		{"up offset -1h", "NaN", "1", "1"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	a := New(Options{Queryable: openDB(f), Timeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	c := serveInMemory(f, a.QueryRange)
	f.Fuzz(func(t *testing.T, q, start, end, step string) {
		args := url.Values{"query": {q}, "start": {start}, "end": {end}, "step": {step}}
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI("http://promapi/api/v1/query_range")
		req.Header.SetMethod(fasthttp.MethodPost) // a form body has no header size limit
		req.Header.SetContentType("application/x-www-form-urlencoded")
		req.SetBodyString(args.Encode())
		if err := c.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		checkAnswer(t, args, resp)
	})
}

// serveInMemory serves h with a real fasthttp server on an in-memory
// listener (a handler's context is its server's) and returns a client.
func serveInMemory(tb testing.TB, h fasthttp.RequestHandler) *fasthttp.Client {
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: h}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	tb.Cleanup(func() {
		srv.Shutdown()
		<-done
	})
	return &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
}

// checkAnswer fails on a 500 or a body that is not Prometheus's JSON.
func checkAnswer(t *testing.T, args url.Values, resp *fasthttp.Response) {
	t.Helper()
	var r struct {
		Status    string          `json:"status"`
		ErrorType string          `json:"errorType"`
		Data      json.RawMessage `json:"data"`
	}
	code := resp.StatusCode()
	if err := json.Unmarshal(resp.Body(), &r); err != nil {
		t.Fatalf("%v: %d %q is not JSON: %v", args, code, resp.Body(), err)
	}
	switch {
	case code == 200 && r.Status == "success" && len(r.Data) > 0:
	case code == 400 && r.ErrorType == "bad_data", code == 422 && r.ErrorType == "execution",
		code == 503 && r.ErrorType == "timeout":
	default:
		t.Fatalf("%v: %d %s", args, code, resp.Body())
	}
}
