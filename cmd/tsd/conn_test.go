package main

import (
	"bufio"
	"errors"
	"github.com/tsd-db/tsd/internal/daemontest"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsd-db/tsd/api"
)

// connLiveness bounds how long these tests wait for the daemon to close a
// connection; it only guards liveness.
const connLiveness = 15 * time.Second

// awaitClose reads c until the daemon closes it, returning what it read
// and the time since start; it fails the test if c stays open.
func awaitClose(t *testing.T, c net.Conn, start time.Time) (string, time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(connLiveness))
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection still open after %v; read %q", time.Since(start), b)
	}
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read: %v", err)
	}
	return string(b), time.Since(start)
}

// telnetVersionOK sends "version" on c and reports whether a reply came.
func telnetVersionOK(c net.Conn, r *bufio.Reader) bool {
	c.SetDeadline(time.Now().Add(connLiveness))
	if _, err := io.WriteString(c, "version\n"); err != nil {
		return false
	}
	line, err := r.ReadString('\n')
	return err == nil && strings.HasPrefix(line, "tsd ")
}

func dialDaemon(t *testing.T, d *daemon) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestDaemonConnDeadlinesAndLimit: through the real binary, a client that
// dribbles its HTTP headers and one that never ends its telnet line are
// closed after tsd.network.read_header_timeout, a telnet client that goes
// quiet after tsd.core.socket.timeout seconds, and past
// tsd.core.connections.limit a new connection is closed at once while the
// open ones work. /metrics counts each.
func TestDaemonConnDeadlinesAndLimit(t *testing.T) {
	t.Parallel() // its own daemon
	const head = 300 * time.Millisecond
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.network.read_header_timeout=300ms",
		"--tsd.core.socket.timeout=1", "--tsd.core.connections.limit=3")
	if !regexp.MustCompile(`msg="connection limit" limit=3 configured=3 open_file_limit=\d+ reserved=1256`).
		MatchString(d.Logs.String()) {
		t.Errorf("no start line with the connection limit:\n%s", d.Logs)
	}

	// Each start is taken before the dial: the daemon's head deadline runs
	// from its accept, which a start taken after the dial can follow.
	start := time.Now()
	slow := dialDaemon(t, d)
	go func() {
		for _, b := range []byte("GET /api/version HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("y", 200)) {
			if _, err := slow.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if got, after := awaitClose(t, slow, start); !strings.HasPrefix(got, "HTTP/1.1 408 ") || after < head {
		t.Errorf("slowloris HTTP client: read %q, closed after %v; want a 408 after %v", got, after, head)
	}
	start = time.Now()
	partial := dialDaemon(t, d)
	io.WriteString(partial, "put sys.cpu.user 1356998400 1 host=a")
	if _, after := awaitClose(t, partial, start); after < head {
		t.Errorf("telnet line without its end: closed after %v, before %v", after, head)
	}
	quiet := dialDaemon(t, d)
	if !telnetVersionOK(quiet, bufio.NewReader(quiet)) {
		t.Fatal("telnet version on a fresh connection failed")
	}
	start = time.Now()
	if _, after := awaitClose(t, quiet, start); after < time.Second {
		t.Errorf("quiet telnet client: closed after %v, before the 1s socket timeout", after)
	}

	var open []net.Conn
	for range 3 {
		c := dialDaemon(t, d)
		if !telnetVersionOK(c, bufio.NewReader(c)) {
			t.Fatal("telnet version under the limit failed")
		}
		open = append(open, c)
	}
	over := dialDaemon(t, d)
	if got, after := awaitClose(t, over, time.Now()); got != "" || after > connLiveness/2 {
		t.Errorf("connection past the limit: read %q, closed after %v", got, after)
	}
	for i, c := range open[1:] {
		if !telnetVersionOK(c, bufio.NewReader(c)) {
			t.Errorf("open connection %d stopped working after a refusal", i+2)
		}
	}
	open[0].Close()
	body := metricsOnceServed(t, d)
	// The /metrics request itself may be refused until the daemon sees
	// the close, so the refusals are 1 or more.
	if m := regexp.MustCompile(`tsd_connectionmgr_connections_total{type="rejected"} (\d+)\n`).FindStringSubmatch(body); m == nil || m[1] == "0" {
		t.Errorf("/metrics counts no refusal:\n%s", grepLines(body, "tsd_connection"))
	}
	for _, want := range []string{
		`tsd_connections_timeouts_total{deadline="read_header"} 2`,
		`tsd_connections_timeouts_total{deadline="idle"} 1`,
		"# TYPE tsd_connectionmgr_connections gauge",
		`tsd_connectionmgr_exceptions_total{type="timeout"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(body, "tsd_connection"))
		}
	}
	if n := strings.Count(d.Logs.String(), "kind=conn.limit"); n != 1 {
		t.Errorf("%d conn.limit log lines, want 1:\n%s", n, d.Logs)
	}
}

// metricsOnceServed gets /metrics, retrying while the daemon has not yet
// seen a closed connection free its slot.
func metricsOnceServed(t *testing.T, d *daemon) string {
	t.Helper()
	deadline := time.Now().Add(connLiveness)
	for {
		c := dialDaemon(t, d)
		c.SetDeadline(time.Now().Add(connLiveness))
		io.WriteString(c, "GET /metrics HTTP/1.0\r\n\r\n")
		b, _ := io.ReadAll(c)
		c.Close()
		if s := string(b); strings.HasPrefix(s, "HTTP/1.0 200 ") || strings.HasPrefix(s, "HTTP/1.1 200 ") {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatal("GET /metrics never served after a connection closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestDaemonConnLimitFitsOpenFiles: under an open-file limit of the
// store's reserve plus 20, the daemon lowers tsd.core.connections.limit to
// 20 and says so; under 1,024 the store keeps fewer sstables open and the
// daemon serves; under one too small for both it does not start, naming
// the key and the figure to raise the limit to.
func TestDaemonConnLimitFitsOpenFiles(t *testing.T) {
	const reserve = 1256 // pebble.DefaultMaxOpenFiles + fdMargin
	d := startDaemonUlimit(t, reserve+20, "--data", t.TempDir())
	if !regexp.MustCompile(`level=WARN msg="tsd.core.connections.limit lowered to fit the open-file limit less the store's reserve" limit=20 configured=10000 open_file_limit=1276 reserved=1256`).
		MatchString(d.Logs.String()) {
		t.Errorf("no warning of the lowered limit:\n%s", d.Logs)
	}
	var open []net.Conn
	for i := range 20 {
		c := dialDaemon(t, d)
		if !telnetVersionOK(c, bufio.NewReader(c)) {
			t.Fatalf("connection %d of 20 not served", i+1)
		}
		open = append(open, c)
	}
	if got, _ := awaitClose(t, dialDaemon(t, d), time.Now()); got != "" {
		t.Errorf("connection 21 read %q before its close", got)
	}

	for _, c := range open {
		c.Close()
	}

	// A hard limit of 1,024 (common on older systems) is too low for
	// pebble's 1,000 open sstables beside clients: the store and clients
	// share what is left, and the daemon serves.
	low := startDaemonUlimit(t, 1024, "--data", t.TempDir())
	if !strings.Contains(low.Logs.String(), "store_open_files=384") || !strings.Contains(low.Logs.String(), "limit=384") {
		t.Errorf("under ulimit -n 1024, no warning of the shared limit:\n%s", low.Logs)
	}
	if c := dialDaemon(t, low); !telnetVersionOK(c, bufio.NewReader(c)) {
		t.Error("under ulimit -n 1024, a connection was not served")
	}

	cmd := exec.Command("sh", "-c", `ulimit -n 300 && exec "$0" "$@"`, tsdBinary(t),
		"--port=0", "--tsd.network.bind=127.0.0.1", "--data", t.TempDir())
	out, err := cmd.CombinedOutput()
	want := "tsd.core.connections.limit: the open-file limit (RLIMIT_NOFILE) is 300; tsd keeps 256 descriptors for itself and at least 64 for its store"
	if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "at least 336") {
		t.Errorf("start under ulimit -n 300: %v\n%s\nwant an error containing %q", err, out, want)
	}
}

// startDaemonUlimit is startDaemon under an open-file limit of n (soft
// and hard, so the Go runtime cannot raise it).
func startDaemonUlimit(t *testing.T, n int, args ...string) *daemon {
	t.Helper()
	args = append([]string{"-c", `ulimit -n ` + strconv.Itoa(n) + ` && exec "$0" "$@"`, tsdBinary(t),
		"--port=0", "--tsd.network.bind=127.0.0.1"}, args...)
	return &daemon{daemontest.StartCommand(t, exec.Command("sh", args...))}
}

func TestPlanFDs(t *testing.T) {
	for _, tc := range []struct {
		limit           int
		nofile          uint64
		engine          string
		store, conns    int
		lowered, low, e bool
	}{
		{10000, 20000, "pebble", 1000, 10000, false, false, false},
		{10000, 5000, "pebble", 1000, 5000 - 1256, true, false, false},
		{0, 20000, "pebble", 1000, 20000 - 1256, true, false, false},
		{0, 1 << 62, "pebble", 1000, 1<<31 - 1 - 1256, true, false, false}, // RLIM_INFINITY and the like
		{0, 0, "pebble", 1000, -1, false, false, false},                    // unknown limit, none configured
		{5, 0, "pebble", 1000, 5, false, false, false},
		{0, 1256 + 16, "pebble", 1000, 16, true, false, false},
		// Too few for pebble's default beside clients: half each.
		{10000, 1256 + 15, "pebble", 507, 508, true, true, false},
		{0, 1024, "pebble", 384, 384, true, true, false},
		{100, 1024, "pebble", 384, 100, false, true, false},
		{0, 256 + 64 + 16, "pebble", 64, 16, true, true, false},
		{0, 256 + 64 + 15, "pebble", 64, 0, false, true, true},
		{0, 1024, "bigtable", 0, 1024 - 256, true, false, false},
		{0, 256 + 15, "bigtable", 0, 0, false, false, true},
	} {
		p, err := planFDs(tc.limit, tc.nofile, tc.engine)
		if (err != nil) != tc.e {
			t.Errorf("planFDs(%d, %d, %s) error %v, want error %v", tc.limit, tc.nofile, tc.engine, err, tc.e)
			continue
		}
		if err != nil {
			continue
		}
		if p.storeFiles != tc.store || p.conns != tc.conns || p.lowered != tc.lowered || p.storeLow != tc.low {
			t.Errorf("planFDs(%d, %d, %s) = %+v; want store %d, conns %d, lowered %v, storeLow %v",
				tc.limit, tc.nofile, tc.engine, p, tc.store, tc.conns, tc.lowered, tc.low)
		}
	}
}

// TestWireConns: the keys' defaults and their 0 ("none") reach
// api.Options, OpenTSDB's socket timeout read in seconds.
func TestWireConns(t *testing.T) {
	for _, tc := range []struct {
		head, idle string
		want       api.Options
	}{
		{"", "", api.Options{ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 300 * time.Second}},
		{"2s", "7", api.Options{ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 7 * time.Second}},
		{"0", "0", api.Options{ReadHeaderTimeout: -1, IdleTimeout: -1}},
	} {
		c := newConfig()
		for name, v := range map[string]string{"tsd.network.read_header_timeout": tc.head, "tsd.core.socket.timeout": tc.idle} {
			if v == "" {
				continue
			}
			if err := c.byName[name].set(v); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if c.fds, err = planFDs(c.network.connLimit, openFileLimit(), c.engine); err != nil {
			t.Fatal(err)
		}
		var opts api.Options
		c.wireConns(&opts, slog.New(slog.DiscardHandler))
		if opts.ReadHeaderTimeout != tc.want.ReadHeaderTimeout || opts.IdleTimeout != tc.want.IdleTimeout || opts.MaxConns == 0 {
			t.Errorf("head %q, idle %q: options %v, %v, %d; want %v, %v and a limit", tc.head, tc.idle,
				opts.ReadHeaderTimeout, opts.IdleTimeout, opts.MaxConns, tc.want.ReadHeaderTimeout, tc.want.IdleTimeout)
		}
	}
}
