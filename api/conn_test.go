package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// Connection deadlines and the connection cap, on real TCP connections.
// The durations are short so the tests are quick; the upper bounds only
// guard liveness and are generous.

const (
	testHead = 300 * time.Millisecond // ReadHeaderTimeout in these tests
	liveness = 10 * time.Second       // how long a test waits for a close
)

// waitClosed reads c until the server closes it and returns what was
// read and how long after start the close came. It fails the test when c
// is still open after liveness.
func waitClosed(t *testing.T, c net.Conn, start time.Time) (string, time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(liveness))
	var got []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("connection still open after %v; read %q", time.Since(start), got)
		}
		if err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read: %v", err)
		}
		return string(got), time.Since(start)
	}
}

// trickle writes s to c one byte every gap until stop closes or a write
// fails (the server closed c); it returns at once.
func trickle(c net.Conn, s string, gap time.Duration, stop <-chan struct{}) {
	go func() {
		for i := 0; i < len(s); i++ {
			if _, err := c.Write([]byte{s[i]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(gap):
			}
		}
	}()
}

// dialAt dials the server's listener and returns the connection and the
// time just before the dial, which is no later than the accept.
func dialAt(t *testing.T, base string) (net.Conn, time.Time) {
	t.Helper()
	start := time.Now()
	return dial(t, base), start
}

// TestReadHeaderTimeout: a connection that does not complete its first
// request head within ReadHeaderTimeout is closed, however it trickles:
// no byte at all, an HTTP request line and headers sent one byte at a time
// (answered 408), or a telnet line that never ends. The idle timeout is
// an hour, so only the head deadline can close them.
func TestReadHeaderTimeout(t *testing.T) {
	t.Parallel() // waits out a timeout: overlap it with the others that do
	s, base := startServer(t, Options{ReadHeaderTimeout: testHead, IdleTimeout: time.Hour, Telnet: echoTelnet{}})
	stop := make(chan struct{})
	defer close(stop)
	slowHTTP := "GET /api/version HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Pad: y\r\n", 100) + "\r\n"
	slowTelnet := "put sys.cpu.user 1356998400 1 host=" + strings.Repeat("a", 200) + "\n"
	for _, tc := range []struct {
		name, send, want string
	}{
		{"silent", "", ""},
		{"slowloris http", slowHTTP, "HTTP/1.1 408 Request Timeout"},
		{"slow telnet line", slowTelnet, ""},
	} {
		c, start := dialAt(t, base)
		trickle(c, tc.send, 20*time.Millisecond, stop)
		got, after := waitClosed(t, c, start)
		if !strings.HasPrefix(got, tc.want) || tc.want == "" && got != "" {
			t.Errorf("%s: read %q before the close, want %q", tc.name, got, tc.want)
		}
		// The deadline counts from the accept, which follows start.
		if after < testHead {
			t.Errorf("%s: closed after %v, before the %v deadline", tc.name, after, testHead)
		}
	}
	if st := s.ConnStats(); st.ReadHeaderTimeouts != 3 || st.IdleTimeouts != 0 || st.Accepted != 3 {
		t.Errorf("ConnStats = %+v, want 3 accepted, 3 read-header timeouts, no idle ones", st)
	}
}

// TestReadHeaderTimeoutLaterRequests: on a keep-alive connection the
// wait for the next request is idle time, not head time (a pause longer
// than ReadHeaderTimeout is fine), but once the next request's first byte
// is in, its head has ReadHeaderTimeout too.
func TestReadHeaderTimeoutLaterRequests(t *testing.T) {
	t.Parallel() // waits out a timeout: overlap it with the others that do
	s, base := startServer(t, Options{ReadHeaderTimeout: testHead, IdleTimeout: time.Hour})
	c := dial(t, base)
	br := bufio.NewReader(c)
	get := "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n"
	for i := range 2 {
		if i > 0 {
			time.Sleep(2 * testHead)
		}
		io.WriteString(c, get)
		c.SetReadDeadline(time.Now().Add(liveness))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d after a pause of 2x ReadHeaderTimeout: %v", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("request %d = %d", i+1, resp.StatusCode)
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	// A request line and headers whose blank line never comes.
	trickle(c, strings.TrimSuffix(get, "\r\n")+"X-Pad: "+strings.Repeat("y", 100), 20*time.Millisecond, stop)
	got, after := waitClosed(t, c, start)
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") || after < testHead-20*time.Millisecond {
		t.Errorf("slow third request: read %q, closed after %v; want a 408 after %v", got, after, testHead)
	}
	if st := s.ConnStats(); st.ReadHeaderTimeouts != 1 {
		t.Errorf("ConnStats = %+v, want 1 read-header timeout", st)
	}
}

// TestIdleTimeout: after its head, a connection is closed once a read
// waits IdleTimeout without a byte, on HTTP between requests and on
// telnet alike; a telnet client that keeps sending, however slowly, stays.
func TestIdleTimeout(t *testing.T) {
	t.Parallel() // waits out a timeout: overlap it with the others that do
	const idle = 400 * time.Millisecond
	s, base := startServer(t, Options{ReadHeaderTimeout: liveness, IdleTimeout: idle, Telnet: echoTelnet{}})

	keep := dial(t, base)
	// The server's idle clock starts after it answers, so after the
	// client writes; timed from the reply instead, a slow machine (the
	// race detector) sees the close up to the reply's delay early.
	start := time.Now()
	io.WriteString(keep, "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n")
	keep.SetReadDeadline(time.Now().Add(liveness))
	br := bufio.NewReader(keep)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive request: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, after := waitClosed(t, keep, start); after < idle {
		t.Errorf("idle keep-alive connection closed after %v, before the %v idle timeout", after, idle)
	}

	quiet := dial(t, base)
	start = time.Now()
	io.WriteString(quiet, "version\n")
	r := bufio.NewReader(quiet)
	quiet.SetReadDeadline(time.Now().Add(liveness))
	if line, err := r.ReadString('\n'); line != "version\n" || err != nil {
		t.Fatalf("telnet echo = %q, %v", line, err)
	}
	if _, after := waitClosed(t, quiet, start); after < idle {
		t.Errorf("idle telnet connection closed after %v, before the %v idle timeout", after, idle)
	}

	// A byte every tenth of the idle timeout, for two idle timeouts; the
	// idle timeout is longer here so a slow test machine keeps the pace.
	const steadyIdle = 1500 * time.Millisecond
	steady, base2 := startServer(t, Options{ReadHeaderTimeout: liveness, IdleTimeout: steadyIdle, Telnet: echoTelnet{}})
	busy := dial(t, base2)
	io.WriteString(busy, "version\n")
	stop := make(chan struct{})
	line := "put m 1 1 h=aaaaaaaa\n"
	trickle(busy, line, steadyIdle/10, stop)
	rb := bufio.NewReader(busy)
	busy.SetReadDeadline(time.Now().Add(liveness))
	for _, want := range []string{"version\n", line} {
		if got, err := rb.ReadString('\n'); got != want || err != nil {
			t.Fatalf("slow but steady telnet client: echo %q, %v; want %q", got, err, want)
		}
	}
	close(stop)
	if st := s.ConnStats(); st.IdleTimeouts != 2 || st.ReadHeaderTimeouts != 0 {
		t.Errorf("ConnStats = %+v, want 2 idle timeouts, no read-header ones", st)
	}
	if st := steady.ConnStats(); st.IdleTimeouts != 0 || st.Open != 1 {
		t.Errorf("steady client's server: ConnStats = %+v, want it open, no timeout", st)
	}
}

// TestStreamedBodyOutlivesHeadTimeout: ReadHeaderTimeout ends with the
// headers, so a large body that streams in slowly but steadily, from its
// first byte on, lands whole; a body that stalls for IdleTimeout ends the
// connection.
func TestStreamedBodyOutlivesHeadTimeout(t *testing.T) {
	t.Parallel() // waits out a timeout: overlap it with the others that do
	w, h, u := newWriter(t, 0)
	const idle = 1500 * time.Millisecond // 30 times the pauses of the slow body
	s, base := startServer(t, Options{Ingest: w, ReadHeaderTimeout: testHead, IdleTimeout: idle})
	body := influxLines("slow", 2000) // about 40 KB, sent over about 2 s
	c := dial(t, base)
	io.WriteString(c, "POST /write?precision=ms HTTP/1.1\r\nHost: x\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n")
	const step = 1000
	for i := 0; i < len(body); i += step {
		time.Sleep(50 * time.Millisecond)
		if _, err := c.Write(body[i:min(i+step, len(body))]); err != nil {
			t.Fatalf("body write at byte %d: %v", i, err)
		}
	}
	c.SetReadDeadline(time.Now().Add(liveness))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("slow body: %v %v", resp, err)
	}
	if n := headPoints(t, h, u, "slow_v"); n != 2000 {
		t.Errorf("%d points stored from the slow body, want 2000", n)
	}
	c.Close() // before it idles out too

	stall := dial(t, base)
	io.WriteString(stall, "POST /write?precision=ms HTTP/1.1\r\nHost: x\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n")
	stall.Write(body[:step])
	start := time.Now()
	got, after := waitClosed(t, stall, start)
	if after < idle {
		t.Errorf("stalled body: closed after %v, before the %v idle timeout", after, idle)
	}
	// The client is told why: it stopped sending, a 408, not a 400 for a
	// body that could not be read.
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, `"code":408`) {
		t.Errorf("stalled body answered %q, want a 408 in OpenTSDB's error JSON", got)
	}
	if st := s.ConnStats(); st.IdleTimeouts != 1 || st.ReadHeaderTimeouts != 0 {
		t.Errorf("ConnStats = %+v, want 1 idle timeout, no read-header ones", st)
	}
}

// TestStalledBodyIs408: a body that stops arriving after the handler has
// started reading it (past fasthttp's first 8 KiB) is answered 408 in the
// endpoint's own error form once the idle timeout passes, not a 400 that
// calls the body unreadable; the connection then closes.
func TestStalledBodyIs408(t *testing.T) {
	t.Parallel() // waits out a timeout: overlap it with the others that do
	w, _, _ := newWriter(t, 0)
	const idle = 500 * time.Millisecond
	_, base := startServer(t, Options{Ingest: w, IdleTimeout: idle})
	var put bytes.Buffer
	put.WriteByte('[')
	for i := range 400 {
		fmt.Fprintf(&put, `{"metric":"stall.put","timestamp":%d,"value":%d,"tags":{"host":"a"}},`, 1_700_000_000+i, i)
	}
	for _, tc := range []struct {
		path string
		part []byte
		want string
	}{
		{"/api/put", put.Bytes(), `{"error":{"code":408,"message":"Request timeout"`},
		{"/write?precision=ms", influxLines("stall", 1000), `{"error":"request timeout: the body stopped arriving: `},
		{"/api/v2/write?precision=ms", influxLines("stall2", 1000), `{"code":"unavailable","message":"request timeout: `},
	} {
		if len(tc.part) < 16<<10 {
			t.Fatalf("%s: %d bytes sent, want over fasthttp's 8 KiB prefix", tc.path, len(tc.part))
		}
		c := dial(t, base)
		io.WriteString(c, "POST "+tc.path+" HTTP/1.1\r\nHost: x\r\nContent-Length: "+
			strconv.Itoa(len(tc.part)+1000)+"\r\n\r\n")
		c.Write(tc.part)
		got, _ := waitClosed(t, c, time.Now())
		if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: stalled body answered %q, want 408 with %s", tc.path, got, tc.want)
		}
	}
}

// logRecords is a slog handler that keeps the records it is given.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}

// kind returns the records of ratelog kind k, each as its message and
// its "suppressed" attribute (0 when absent).
func (l *logRecords) kind(k string) (msgs []string, suppressed []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		var isKind bool
		var n int64
		r.Attrs(func(a slog.Attr) bool {
			isKind = isKind || a.Key == "kind" && a.Value.String() == k
			if a.Key == "suppressed" {
				n = a.Value.Int64()
			}
			return true
		})
		if isKind {
			msgs, suppressed = append(msgs, r.Message), append(suppressed, n)
		}
	}
	return msgs, suppressed
}

// TestMaxConns: past MaxConns a new connection is closed at once while
// the open ones keep working; once one closes, a new one is served. The
// refusals are counted, and logged once per window of the rate-limited
// log, the next window's line carrying how many were left out.
func TestMaxConns(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	recs := &logRecords{}
	rl := ratelog.New(ratelog.Options{Logger: slog.New(recs),
		Now: func() time.Time { return time.Unix(0, now.Load()) }})
	s, base := startServer(t, Options{MaxConns: 2, Telnet: echoTelnet{}, RateLog: rl})

	echo := func(c net.Conn, r *bufio.Reader) error {
		c.SetDeadline(time.Now().Add(liveness))
		io.WriteString(c, "version\n")
		line, err := r.ReadString('\n')
		if err == nil && line != "version\n" {
			err = errors.New("echo " + strconv.Quote(line))
		}
		return err
	}
	var open []net.Conn
	var readers []*bufio.Reader
	for range 2 {
		c := dial(t, base)
		r := bufio.NewReader(c)
		if err := echo(c, r); err != nil {
			t.Fatal(err)
		}
		open, readers = append(open, c), append(readers, r)
	}
	for i := range 3 {
		c, start := dialAt(t, base)
		if got, after := waitClosed(t, c, start); got != "" || after > liveness/2 {
			t.Errorf("connection %d past the limit: read %q, closed after %v", i+3, got, after)
		}
	}
	for i, c := range open {
		if err := echo(c, readers[i]); err != nil {
			t.Errorf("open connection %d after the refusals: %v", i+1, err)
		}
	}
	if st := s.ConnStats(); st.Open != 2 || st.Refused != 3 || st.Accepted != 2 {
		t.Errorf("ConnStats = %+v, want 2 open, 2 accepted, 3 refused", st)
	}
	if msgs, _ := recs.kind("conn.limit"); len(msgs) != 1 {
		t.Errorf("%d conn.limit lines for 3 refusals in one window, want 1: %q", len(msgs), msgs)
	}

	// The next window: one more refusal is logged with the two left out.
	now.Add(int64(ratelog.DefaultEvery))
	c, start := dialAt(t, base)
	waitClosed(t, c, start)
	if _, sup := recs.kind("conn.limit"); len(sup) != 2 || sup[1] != 2 {
		t.Errorf("conn.limit lines' suppressed counts = %v, want [0 2]", sup)
	}

	// Freeing a slot lets a new connection in. The server notices the
	// close when its read ends, so the client may be refused meanwhile.
	open[0].Close()
	deadline := time.Now().Add(liveness)
	for {
		c := dial(t, base)
		if echo(c, bufio.NewReader(c)) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one of the two closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPipelinedRequests: requests sent back to back in one write, the
// later ones already buffered when the first is answered, are all
// answered under the deadlines' bookkeeping.
func TestPipelinedRequests(t *testing.T) {
	s, base := startServer(t, Options{ReadHeaderTimeout: testHead, IdleTimeout: time.Hour})
	c := dial(t, base)
	io.WriteString(c, strings.Repeat("GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n", 3))
	c.SetReadDeadline(time.Now().Add(liveness))
	br := bufio.NewReader(c)
	for i := range 3 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("pipelined request %d: %v %v", i+1, resp, err)
		}
		io.Copy(io.Discard, resp.Body)
	}
	time.Sleep(2 * testHead) // idle between requests is not head time
	io.WriteString(c, "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("request after the pipelined ones: %v %v", resp, err)
	}
	if st := s.ConnStats(); st.ReadHeaderTimeouts != 0 || st.IdleTimeouts != 0 {
		t.Errorf("ConnStats = %+v, want no timeouts", st)
	}
}

// TestSlowlorisFlood: the attack in small, many connections each
// sending a byte of a request now and then, all closed once their head
// deadline passes, none left open.
func TestSlowlorisFlood(t *testing.T) {
	const n = 200
	s, base := startServer(t, Options{ReadHeaderTimeout: testHead, IdleTimeout: time.Hour})
	stop := make(chan struct{})
	defer close(stop)
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, base)
		trickle(conns[i], "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: "+strings.Repeat("y", 100), 100*time.Millisecond, stop)
	}
	start := time.Now()
	for _, c := range conns {
		waitClosed(t, c, start)
	}
	if st := s.ConnStats(); st.ReadHeaderTimeouts != n || st.Open != 0 {
		t.Errorf("ConnStats = %+v, want %d read-header timeouts and none open", st, n)
	}
}

// TestConnResetCounted: a client that resets its connection (SO_LINGER 0)
// while the server waits for its next request is counted once as
// OpenTSDB's connectionmgr.exceptions type=reset; an orderly close counts
// nothing.
func TestConnResetCounted(t *testing.T) {
	s, base := startServer(t, Options{})
	for _, c := range []struct{ send, reply string }{
		{"GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200"},
		{"GET /api/aggregators HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200"},
	} {
		conn := dial(t, base)
		if _, err := conn.Write([]byte(c.send)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(c.reply))
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != c.reply {
			t.Fatalf("reply %q %v", buf, err)
		}
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}
	orderly := dial(t, base)
	orderly.Close()
	deadline := time.Now().Add(30 * time.Second) // liveness only
	// The kernel completes a dial before the server accepts it: wait for
	// the third accept too, not only for no connection open.
	for st := s.ConnStats(); st.Open != 0 || st.Accepted < 3; st = s.ConnStats() {
		if time.Now().After(deadline) {
			t.Fatalf("connections still open: %+v", s.ConnStats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := s.ConnStats(); st.Resets != 2 || st.Closed != 0 || st.Failed != 0 || st.Accepted != 3 {
		t.Errorf("ConnStats = %+v, want 2 resets of 3 connections, no other failure", st)
	}
}
