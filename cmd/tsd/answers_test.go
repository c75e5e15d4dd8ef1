package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ansT0 is the first timestamp of loadTelnet's points, an hour boundary.
const ansT0 = 1_700_002_800

// loadTelnet puts metric m for hosts h0..h<hosts-1>, a point every 10 s
// over span seconds from ansT0, on one telnet connection, and waits for
// the version barrier: every point is acknowledged.
func loadTelnet(t *testing.T, d *daemon, m string, hosts, span int) {
	t.Helper()
	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Minute)) // liveness only
	w := bufio.NewWriterSize(c, 1<<16)
	for h := range hosts {
		for i := 0; i < span; i += 10 {
			fmt.Fprintf(w, "put %s %d %d host=h%d\n", m, ansT0+i, h*1000+(i/10*7)%100, h)
		}
	}
	w.WriteString("version\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for range 2 {
		line, err := r.ReadString('\n')
		if err != nil || strings.HasPrefix(line, "put:") {
			t.Fatalf("loading %s: %q %v", m, line, err)
		}
	}
}

// rawGet sends GET path on a new connection and returns the response
// with its body read whole, and the read's error (a cut answer is
// io.ErrUnexpectedEOF).
func rawGet(t *testing.T, d *daemon, path string) (*http.Response, string, error) {
	t.Helper()
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true, DisableKeepAlives: true}}).Get("http://" + d.Addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// metricValue reads a counter or gauge line of /metrics, -1 if absent.
func metricValue(t *testing.T, d *daemon, line string) float64 {
	t.Helper()
	_, body := d.Get(t, "/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// eventually polls cond; the limit only guards liveness.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestDaemonStalledClient: a client that sends a large /api/query (2,000
// series, 720,000 points, a 15 MB answer) and never reads gets its answer
// streamed (chunked), holds no query slot while its write waits (with one
// slot and no queue, other queries run meanwhile), and is closed after
// tsd.network.write_timeout, counted in /metrics; the slot is free after.
func TestDaemonStalledClient(t *testing.T) {
	t.Parallel() // waits out a write timeout
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.network.write_timeout=2s",
		"--tsd.query.max_concurrent=1", "--tsd.query.max_queued=0")
	loadTelnet(t, d, "big", 2000, 3600)
	loadTelnet(t, d, "small", 2, 600)
	small := fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:small", ansT0, ansT0+599)
	code, want := d.Get(t, small)
	if code != 200 || !strings.HasPrefix(want, `[{"metric":"small"`) {
		t.Fatalf("small query: %d %s", code, want)
	}
	c := dialSmallWindow(t, d.Addr)
	defer c.Close()
	fmt.Fprintf(c, "GET /api/query?start=%d&end=%d&m=sum:big%%7Bhost=*%%7D HTTP/1.1\r\nHost: x\r\n\r\n", ansT0, ansT0+3599)
	c.SetReadDeadline(time.Now().Add(time.Minute))
	head, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil) // the head only; the body is never read
	if err != nil || head.StatusCode != 200 || !slicesHas(head.TransferEncoding, "chunked") {
		t.Fatalf("the large answer's head: %v %+v, want 200 chunked", err, head)
	}
	eventually(t, "a query to run beside the stalled answer", func() bool {
		code, body := d.Get(t, small)
		return code == 200 && body == want
	})
	if n := metricValue(t, d, "tsd_connection_write_timeouts_total"); n != 0 {
		t.Fatalf("write timeouts %v before the client's 2 s passed", n)
	}
	eventually(t, "the write timeout", func() bool {
		return metricValue(t, d, "tsd_connection_write_timeouts_total") == 1
	})
	if code, body := d.Get(t, small); code != 200 || body != want {
		t.Errorf("after the close: %d %s", code, body)
	}
	if n := metricValue(t, d, "tsd_query_running"); n != 0 {
		t.Errorf("tsd_query_running %v after the close, want 0", n)
	}
}

func slicesHas(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestDaemonTelnetWriteTimeout: a telnet client that sends commands and
// never reads their replies is closed after tsd.network.write_timeout:
// its own writes then fail, and /metrics counts it.
func TestDaemonTelnetWriteTimeout(t *testing.T) {
	t.Parallel() // its own daemon
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.network.write_timeout=1s")
	c := dialSmallWindow(t, d.Addr)
	defer c.Close()
	lines := []byte(strings.Repeat("version\n", 4096))
	c.SetWriteDeadline(time.Now().Add(time.Minute)) // liveness only: the server must close first
	var werr error
	for sent := 0; werr == nil && sent < 1<<30; sent += len(lines) {
		_, werr = c.Write(lines)
	}
	var ne net.Error
	if werr == nil || (errors.As(werr, &ne) && ne.Timeout()) {
		t.Fatalf("writing commands without reading the replies: %v, want the server to close the connection", werr)
	}
	eventually(t, "the write timeout counted", func() bool {
		return metricValue(t, d, "tsd_connection_write_timeouts_total") == 1
	})
}

// TestDaemonOutputLimit: with tsd.query.limits.output_points=20000, a
// filled downsampling whose groups x buckets pass it is answered 413
// before any byte; a raw answer passing it after its first chunk ends
// with OpenTSDB's error object and a cut transfer, is logged, and both
// are counted in /metrics.
func TestDaemonOutputLimit(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.query.limits.output_points=20000")
	loadTelnet(t, d, "big", 200, 3600)
	resp, body, err := rawGet(t, d, fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:1s-avg-zero:big%%7Bhost=*%%7D", ansT0, ansT0+3599))
	if err != nil || resp.StatusCode != 413 || len(resp.TransferEncoding) > 0 ||
		!strings.HasPrefix(body, `{"error":{"code":413,"message":"Sorry, the answer would have up to 720200 data points, more than our limit of 20000`) {
		t.Errorf("planned: %v %d %v %s", err, resp.StatusCode, resp.TransferEncoding, body)
	}
	resp, body, err = rawGet(t, d, fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:big%%7Bhost=*%%7D", ansT0, ansT0+3599))
	cut := "\n" + `{"error":{"code":413,"message":"Sorry, the answer has more than our limit of 20000 data points (tsd.query.limits.output_points).`
	if resp.StatusCode != 200 || !slicesHas(resp.TransferEncoding, "chunked") || !errors.Is(err, io.ErrUnexpectedEOF) ||
		!strings.Contains(body, cut) || !strings.HasPrefix(body, `[{"metric":"big"`) {
		t.Errorf("streamed: %d %v, read %v, body of %d bytes ending %q", resp.StatusCode, resp.TransferEncoding, err, len(body), body[max(0, len(body)-300):])
	}
	for when, want := range map[string]float64{"refused": 1, "aborted": 1} {
		if n := metricValue(t, d, `tsd_query_output_limit_total{when="`+when+`"}`); n != want {
			t.Errorf("output limit %s: %v, want %v", when, n, want)
		}
	}
	eventually(t, "the abort logged", func() bool { return strings.Contains(d.Logs.String(), "answer cut short: it passed the output limit") })
}

// TestDaemonQueueFull: with one query slot and no queue, twenty clients
// asking at once for an answer that takes a while to start (every
// series of a metric read into downsampling buckets first) mostly find
// the slot taken: they are answered 503 with Retry-After in their
// language's error form, OpenTSDB's and Prometheus's, the others whole,
// and /metrics counts the refusals.
func TestDaemonQueueFull(t *testing.T) {
	t.Parallel() // its own daemon
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.query.max_concurrent=1", "--tsd.query.max_queued=0")
	loadTelnet(t, d, "big", 2000, 3600)
	paths := map[string]string{
		"opentsdb": fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:10m-avg:big%%7Bhost=*%%7D", ansT0, ansT0+3599),
		"promql":   fmt.Sprintf("/api/v1/query_range?query=avg_over_time(big[10m])&start=%d&end=%d&step=600", ansT0, ansT0+3599),
	}
	wants := map[string][2]string{
		"opentsdb": {`[{"metric":"big"`, `{"error":{"code":503,"message":"Too many queries are running; retry later","details":"tsd.query.max_concurrent queries are running and up to tsd.query.max_queued wait"}}`},
		"promql":   {`{"status":"success"`, `{"status":"error","errorType":"unavailable","error":"too many queries running and waiting; retry later"}`},
	}
	for api, path := range paths {
		var (
			wg            sync.WaitGroup
			mu            sync.Mutex
			ok, busy, odd int
		)
		for range 20 {
			wg.Go(func() {
				resp, body, err := rawGet(t, d, path)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && resp.StatusCode == 200 && strings.HasPrefix(body, wants[api][0]):
					ok++
				case err == nil && resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "1" && body == wants[api][1]:
					busy++
				default:
					odd++
					t.Errorf("%s: %v %d %q %.200s", api, err, resp.StatusCode, resp.Header.Get("Retry-After"), body)
				}
			})
		}
		wg.Wait()
		if ok == 0 || busy == 0 || odd > 0 {
			t.Errorf("%s: %d answered, %d refused, %d otherwise: want some of each of the first two", api, ok, busy, odd)
		}
	}
	if n := metricValue(t, d, "tsd_query_refused_total"); n < 2 {
		t.Errorf("tsd_query_refused_total %v, want the refusals counted", n)
	}
}

// dialSmallWindow dials addr with a 4 KiB receive buffer set before the
// connection opens, so the server sees a small window from the first
// segment. Set after connecting, a buffer below the window already
// advertised makes the client's kernel drop the server's segments, their
// ACKs with them, and the two can stall in retransmission backoff with
// every reply already taken by the server's kernel: the server then
// rightly waits for input and never meets its write timeout (a telnet
// test failed so about one run in eight).
func dialSmallWindow(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
