package api

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/valyala/fasthttp"
)

// TestRouteObserveAllocs: once a route has answered a status code, a
// request of it costs no allocation (the route x code child is made
// once), and the route, ingest and query histograms all count it.
func TestRouteObserveAllocs(t *testing.T) {
	m := NewMetrics()
	r := m.newRoute("/api/put")
	r.observe(204, time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() { r.observe(204, time.Millisecond) }); n != 0 {
		t.Errorf("observe allocates %v times a request", n)
	}
	q := m.newRoute("/api/query/last")
	q.observe(200, time.Second)
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			if h := mt.GetHistogram(); h != nil {
				key := mf.GetName()
				for _, l := range mt.GetLabel() {
					key += " " + l.GetName() + "=" + l.GetValue()
				}
				counts[key] = h.GetSampleCount()
			}
		}
	}
	for key, want := range map[string]uint64{
		"tsd_http_request_duration_seconds code=204 route=/api/put":        1002,
		"tsd_ingest_request_duration_seconds protocol=put":                 1002,
		"tsd_http_request_duration_seconds code=200 route=/api/query/last": 1,
		"tsd_query_duration_seconds api=last":                              1,
	} {
		if counts[key] != want {
			t.Errorf("%s = %d, want %d", key, counts[key], want)
		}
	}
}

// testCtx is a request from 10.1.2.3 answered with status and body.
func testCtx(method, uri string, status int, body string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 5555}, nil)
	ctx.SetStatusCode(status)
	ctx.SetBodyString(body)
	return ctx
}

// TestAccessLine: the line's fields, a path's quote escaped, the query
// string left out, and no allocation.
func TestAccessLine(t *testing.T) {
	ctx := testCtx("GET", `/api/q"x?secret=1`, 404, "nope")
	b := appendAccessLine(nil, ctx, 1500*time.Microsecond)
	line := string(b)
	if !strings.HasSuffix(line, ` 10.1.2.3 - "GET /api/q%22x" 404 4 0.001500`+"\n") || strings.Contains(line, "secret") {
		t.Errorf("access line %q", line)
	}
	if n := testing.AllocsPerRun(100, func() { b = appendAccessLine(b[:0], ctx, time.Millisecond) }); n != 0 {
		t.Errorf("appendAccessLine allocates %v times", n)
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestAccessLogBounded: a writer that does not move never holds a
// request up; the lines that do not fit the queue are dropped and
// counted, and every line is either written or counted.
func TestAccessLogBounded(t *testing.T) {
	m := NewMetrics()
	w := &blockingWriter{release: make(chan struct{})}
	a := newAccessLog(w, m.dropped)
	ctx := testCtx("GET", "/api/version", 200, "{}")
	// The writer goroutine may hold one buffer of lines (64 KiB) and one
	// line in hand besides the queue.
	held := accessLogLines + (64<<10)/len(appendAccessLine(nil, ctx, time.Millisecond)) + 2
	n := held + 500
	for range n { // would hang here if a line waited for the writer
		a.log(ctx, time.Millisecond)
	}
	var dm dto.Metric
	m.dropped.Write(&dm)
	dropped := int(dm.GetCounter().GetValue())
	if dropped < n-held {
		t.Errorf("dropped %d of %d lines with the writer stuck, want at least %d", dropped, n, n-held)
	}
	close(w.release)
	a.close()
	written := strings.Count(w.buf.String(), "\n")
	if written+dropped != n {
		t.Errorf("written %d + dropped %d != %d", written, dropped, n)
	}
	a.log(ctx, time.Millisecond) // after close: dropped, no panic
}

// BenchmarkRouteObserve is the per-request cost of the route, ingest and
// query histograms, and of an access line.
func BenchmarkRouteObserve(b *testing.B) {
	m := NewMetrics()
	r := m.newRoute("/api/put")
	r.observe(204, time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		r.observe(204, time.Millisecond)
	}
}

func BenchmarkAccessLine(b *testing.B) {
	ctx := testCtx("POST", "/api/put", 204, "")
	buf := appendAccessLine(nil, ctx, time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendAccessLine(buf[:0], ctx, time.Millisecond)
	}
}
