package api

import (
	"bufio"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Two fasthttp goroutines are not ours to stop: the worker-pool cleaner
// checks its stop channel only between sleeps of MaxIdleWorkerDuration
// (10s), so it outlives Server.Close by up to that long, and the process-wide
// Date header ticker runs forever once any server starts.
//
// The parallel tests wait out timeouts: six run at once.
func TestMain(m *testing.M) {
	parallelUnlessSet(6)
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// fasthttp's response compression runs on a process-wide pool of
		// stackless workers that never exits (the Prometheus API gzips).
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp/stackless.funcWorker"))
}

// parallelUnlessSet lets n parallel tests run at once unless
// -test.parallel was given: the default, GOMAXPROCS, leaves the cores idle
// while two tests wait.
func parallelUnlessSet(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// testVersion is a VersionInfo whose every field is distinct, so a field
// written under the wrong name shows.
var testVersion = VersionInfo{
	Version: "1.2.3", ShortRevision: "abcdef0", FullRevision: "abcdef0123",
	Timestamp: "1700000000", RepoStatus: "MINT", User: "u", Host: "h",
	Repo: "github.com/tsd-db/tsd", Branch: "main",
}

// startServer runs a Server on an ephemeral 127.0.0.1 port and returns it
// with its base URL; the server is closed when the test ends.
func startServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return s, "http://" + ln.Addr().String()
}

// do sends one request and returns status, Content-Type and body.
func do(t *testing.T, method, url, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

const wantVersionJSON = `{"version":"1.2.3","short_revision":"abcdef0","full_revision":"abcdef0123",` +
	`"timestamp":"1700000000","repo_status":"MINT","user":"u","host":"h",` +
	`"repo":"github.com/tsd-db/tsd","branch":"main"}`

func TestVersion(t *testing.T) {
	_, base := startServer(t, Options{Version: testVersion})
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/version"}, {"POST", "/api/version"}, {"GET", "/api/v1/version"},
		{"GET", "/API/Version"}, {"GET", "/api/version/extra"}, {"GET", "/api/version?x=1"},
	} {
		code, ctype, body := do(t, tc.method, base+tc.path, "")
		if code != 200 || ctype != contentTypeJSON || body != wantVersionJSON {
			t.Errorf("%s %s = %d %q %s, want 200 %q %s", tc.method, tc.path, code, ctype, body,
				contentTypeJSON, wantVersionJSON)
		}
	}
}

func TestVersionMethodNotAllowed(t *testing.T) {
	_, base := startServer(t, Options{Version: testVersion})
	code, _, body := do(t, "PUT", base+"/api/version", "")
	want := `{"error":{"code":405,"message":"Method not allowed",` +
		`"details":"The HTTP method [PUT] is not permitted for this endpoint"}}`
	if code != 405 || body != want {
		t.Errorf("PUT /api/version = %d %s, want 405 %s", code, body, want)
	}
}

func TestNotFound(t *testing.T) {
	_, base := startServer(t, Options{})
	const want = `{"error":{"code":404,"message":"Endpoint not found"}}`
	for _, path := range []string{
		"/nope", "/api", "/api/", "/api/v1", "/api/v1/", "/api/nope", "/api/serializers",
		"/api/vx/version", "/prometheus", "/prometheus/api/v1/version", "/prometheus/write",
		"/api/v1/label//values", "/api/v1/label/a/b/values", "/writes",
	} {
		code, ctype, body := do(t, "GET", base+path, "")
		if code != 404 || ctype != contentTypeJSON || body != want {
			t.Errorf("GET %s = %d %q %s, want 404 %s", path, code, ctype, body, want)
		}
	}
}

func TestPlannedEndpoints(t *testing.T) {
	_, base := startServer(t, Options{})
	for path, name := range map[string]string{
		"/api/put":                            "/api/put",
		"/api/v1/put":                         "/api/put",
		"/API/PUT":                            "/api/put",
		"/api/query":                          "/api/query",
		"/api/query/last":                     "/api/query/last",
		"/api/v1/query/exp":                   "/api/query/exp",
		"/api/uid/assign":                     "/api/uid",
		"/api/v1/query":                       "/api/query", // no query parameter: OpenTSDB's
		"/api/v1/query_range":                 "/api/v1/query_range",
		"/prometheus/api/v1/query_range":      "/api/v1/query_range",
		"/api/v1/label/job/values":            labelValuesPath,
		"/prometheus/api/v1/label/job/values": labelValuesPath,
		"/api/v1/write":                       "/api/v1/write",
		"/write":                              "/write",
		"/api/v2/write":                       "/api/v2/write",
	} {
		code, ctype, body := do(t, "POST", base+path, "")
		want := `{"error":{"code":501,"message":"Endpoint not implemented: ` + name + `"}}`
		if code != 501 || ctype != contentTypeJSON || body != want {
			t.Errorf("POST %s = %d %q %s, want 501 %s", path, code, ctype, body, want)
		}
	}
}

func TestAPIVersions(t *testing.T) {
	_, base := startServer(t, Options{})
	for path, want := range map[string]string{
		"/api/v2/version": `{"error":{"code":501,"message":"Requested API version is greater than the max implemented",` +
			`"details":"API version [2] is greater than the max [1]"}}`,
		"/api/v2/query": `{"error":{"code":501,"message":"Requested API version is greater than the max implemented",` +
			`"details":"API version [2] is greater than the max [1]"}}`,
		"/api/v1x/version": `{"error":{"code":400,"message":"Invalid API version format supplied",` +
			`"details":"API version [1x] cannot be parsed to an integer"}}`,
		"/api/v99999999999/put": `{"error":{"code":400,"message":"Invalid API version format supplied",` +
			`"details":"API version [99999999999] cannot be parsed to an integer"}}`,
	} {
		_, _, body := do(t, "GET", base+path, "")
		if body != want {
			t.Errorf("GET %s = %s, want %s", path, body, want)
		}
	}
}

func TestIndex(t *testing.T) {
	_, base := startServer(t, Options{Version: testVersion})
	code, ctype, body := do(t, "GET", base+"/", "")
	if code != 200 || ctype != contentTypeText {
		t.Fatalf("GET / = %d %q", code, ctype)
	}
	built, todo, ok := strings.Cut(body, "Endpoints not built yet")
	if !ok || !strings.HasPrefix(body, "tsd 1.2.3\n") ||
		!strings.Contains(built, "  /api/version\n") || !strings.Contains(todo, "  /api/put\n") ||
		strings.Contains(built, "/api/put") {
		t.Errorf("GET / body:\n%s", body)
	}
}

func TestBodyTooLarge(t *testing.T) {
	_, base := startServer(t, Options{MaxRequestBodySize: 16})
	code, _, body := do(t, "POST", base+"/api/version", strings.Repeat("x", 100))
	want := `{"error":{"code":413,"message":"Request body too large",` +
		`"details":"The request body is larger than the limit of 16 bytes"}}`
	if code != 413 || body != want {
		t.Errorf("oversized POST = %d %s, want 413 %s", code, body, want)
	}
}

func TestNonHTTPClosedWithoutTelnet(t *testing.T) {
	_, base := startServer(t, Options{})
	c := dial(t, base)
	if _, err := c.Write([]byte("put sys.cpu 1 1 host=a\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Closing with unread input makes the kernel send RST, so a reset
	// counts as closed too; only a timeout means the server kept it open.
	if n, err := c.Read(make([]byte, 1)); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read on a telnet connection = %d, %v; want the server to close it", n, err)
	}
}

// echoTelnet is a ConnHandler that writes back each line it reads, so a
// test sees exactly the bytes the server handed on, first byte included.
type echoTelnet struct{}

func (echoTelnet) ServeConn(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := io.WriteString(c, line); err != nil {
			return
		}
	}
}

func TestTelnetHandOff(t *testing.T) {
	s, base := startServer(t, Options{Telnet: echoTelnet{}})
	c := dial(t, base)
	r := bufio.NewReader(c)
	for _, line := range []string{"put sys.cpu 1 1 host=a\n", "version\n"} {
		if _, err := io.WriteString(c, line); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != line {
			t.Fatalf("echo = %q, %v; want %q", got, err, line)
		}
	}
	// Close must end the handler by closing its connection.
	s.Close()
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("telnet connection still open after Close")
	}
}

func TestCloseEndsIdleConnections(t *testing.T) {
	s, base := startServer(t, Options{IdleTimeout: time.Hour, ShutdownTimeout: 5 * time.Second})
	silent := dial(t, base) // never sends a byte: still being sniffed
	keep := dial(t, base)   // a keep-alive HTTP connection, idle after one request
	io.WriteString(keep, "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(keep), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive request: %v %v", resp, err)
	}
	resp.Body.Close()
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Close took %v with idle connections", d)
	}
	for name, c := range map[string]net.Conn{"silent": silent, "keep-alive": keep} {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s connection not closed by Close: %v", name, err)
		}
	}
}

func TestServeAfterClose(t *testing.T) {
	s, err := New(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve after Close = %v, want ErrServerClosed", err)
	}
	if _, err := ln.Accept(); err == nil {
		t.Error("Serve after Close left the listener open")
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Addr: "4242"}, {MaxRequestBodySize: -1}, {ShutdownTimeout: -1},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted invalid options", o)
		}
	}
}

func dial(t *testing.T, base string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
