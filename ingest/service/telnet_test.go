package service

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runTelnet serves one connection over a real loopback TCP socket, writes
// input, half-closes, and returns everything the handler answered.
func runTelnet(t *testing.T, h *TelnetHandler, input string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		h.ServeConn(c)
		c.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, input); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	out, err := io.ReadAll(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	<-served
	return string(out)
}

func newTelnet(t *testing.T, st *testStack, opts TelnetOptions) *TelnetHandler {
	h, err := NewTelnetHandler(st.w, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestTelnetLines(t *testing.T) {
	st := newStack(t, nil)
	h := newTelnet(t, st, TelnetOptions{Version: "tsd test\nBuilt on now", MaxLineBytes: 100})
	out := runTelnet(t, h, "put m 1356998400 1 host=a\r\n"+
		"put m 1356998401 x host=a\n"+
		"put m 1356998402 "+strings.Repeat("9", 200)+" host=a\n"+
		"rollup 1h-SUM m 1356998400 1 host=a\n"+
		"\n"+
		"version\n"+
		"put m 1356998403 3 host=a") // the last line has no "\n"
	want := "put: invalid value: Invalid character 'x' in x\n" +
		"error: line too long: over 100 bytes\n" +
		"rollup: illegal argument: No rollup or aggregations were configured\n" + // tsd.rollups.enable=false
		"unknown command: .  Try `help'.\n" +
		"tsd test\nBuilt on now\n"
	if out != want {
		t.Errorf("replies:\n%s\nwant:\n%s", out, want)
	}
	if got := strings.Join(st.points(t, "m", "host", "a"), ";"); got != "{} 1356998400000 1i;{} 1356998403000 3i" {
		t.Errorf("stored %s", got)
	}
	if n := st.w.Stats(Telnet).TooLarge.Load(); n != 1 {
		t.Errorf("%d lines counted too long, want 1", n)
	}
}

func TestTelnetExitAndStats(t *testing.T) {
	st := newStack(t, nil)
	h := newTelnet(t, st, TelnetOptions{})
	out := runTelnet(t, h, "put m 1356998400 1\nput m\nstats\nexit\nput m 1356998401 2\nversion\n")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "put: illegal argument: not enough arguments (need least 3, got 1)" {
		t.Errorf("first reply %q", lines[0])
	}
	stats := strings.Join(lines[1:], "\n")
	for _, want := range []string{"tsd.ingest.points ", "tsd.ingest.bad ", "tsd.head.series "} {
		if !strings.Contains(stats, want) {
			t.Errorf("stats lack %q:\n%s", want, stats)
		}
	}
	// StatsCollector.record writes the record's own tag before the
	// collector's host tag: "tsd.<name> <ts> <value> protocol=telnet host=<h>".
	if !regexp.MustCompile(`(?m)^tsd\.ingest\.bad \d+ 1 protocol=telnet host=\S+$`).MatchString(stats) ||
		!regexp.MustCompile(`(?m)^tsd\.head\.series \d+ \d+ host=\S+$`).MatchString(stats) || strings.Contains(out, "tsd\n") {
		t.Errorf("stats or exit wrong (nothing after exit is served):\n%s", out)
	}
	if got := strings.Join(st.points(t, "m"), ";"); got != "{} 1356998400000 1i" {
		t.Errorf("stored %s", got)
	}
}

// TestTelnetCommitsWhileStreaming: a client that never lets the read
// buffer run empty (here, a line left unfinished) still gets its puts into
// the log once maxTelnetPending of them are waiting.
func TestTelnetCommitsWhileStreaming(t *testing.T) {
	st := newStack(t, nil)
	h := newTelnet(t, st, TelnetOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		if c, err := ln.Accept(); err == nil {
			h.ServeConn(c)
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range maxTelnetPending {
		b.WriteString("put m " + strconv.Itoa(1356998400+i) + " 1 host=a\n")
	}
	b.WriteString("put m 1356998399 1 host=a") // unfinished: the buffer never empties
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	// The connection stays open; only a commit counts the points. The
	// deadline only guards against a hang.
	for deadline := time.Now().Add(30 * time.Second); st.w.Stats(Telnet).Points.Load() < maxTelnetPending; {
		if time.Now().After(deadline) {
			t.Fatalf("%d points committed while the client streams, want %d",
				st.w.Stats(Telnet).Points.Load(), maxTelnetPending)
		}
		time.Sleep(time.Millisecond)
	}
	c.Close()
	<-served
	if got := st.w.Stats(Telnet).Points.Load(); got != maxTelnetPending+1 {
		t.Errorf("%d points after close, want %d", got, maxTelnetPending+1)
	}
}

// TestTelnetHelpAndEmptyLine pins two replies byte for byte to OpenTSDB
// 2.4. help (RpcManager.Help) lists the registered commands in the order
// initializeBuiltinRpcs registers them, each followed by a space, and
// diediedie only when it is enabled. An empty line is a frame too
// (LineBasedFrameDecoder returns an empty buffer, WordSplitter makes it
// [""]), so it gets RpcHandler.Unknown's reply for the command "".
func TestTelnetHelpAndEmptyLine(t *testing.T) {
	st := newStack(t, nil)
	h := newTelnet(t, st, TelnetOptions{NoDieDieDie: true})
	out := runTelnet(t, h, "help\n\n\r\nexit\n")
	want := "available commands: stats dropcaches version exit help put rollup histogram \n" +
		"unknown command: .  Try `help'.\n" +
		"unknown command: .  Try `help'.\n"
	if out != want {
		t.Errorf("replies:\n%q\nwant:\n%q", out, want)
	}
	h = newTelnet(t, st, TelnetOptions{Shutdown: func() {}})
	out = runTelnet(t, h, "help\nexit\n")
	if want := "available commands: stats dropcaches version exit help put rollup histogram diediedie \n"; out != want {
		t.Errorf("help with diediedie enabled = %q, want %q", out, want)
	}
}

// TestTelnetReadOnly: a handler without a writer (tsd.mode=ro) answers
// put, rollup and histogram as unknown commands, as OpenTSDB's read-only
// mode registers none of them, lists only the other commands in help,
// and still answers version and dropcaches.
func TestTelnetReadOnly(t *testing.T) {
	dropped := 0
	h, err := NewTelnetHandler(nil, TelnetOptions{Version: "tsd test", NoDieDieDie: true, DropCaches: func() { dropped++ }})
	if err != nil {
		t.Fatal(err)
	}
	got := runTelnet(t, h, "put sys.cpu 1356998400 1 host=a\nrollup x\nhistogram x\nhelp\nversion\ndropcaches\nstats\n")
	want := "unknown command: put.  Try `help'.\n" +
		"unknown command: rollup.  Try `help'.\n" +
		"unknown command: histogram.  Try `help'.\n" +
		"available commands: stats dropcaches version exit help \n" +
		"tsd test\n" +
		"Caches dropped.\n"
	if got != want || dropped != 1 {
		t.Errorf("read-only telnet (dropped %d):\n%s\nwant:\n%s", dropped, got, want)
	}
}

// TestTelnetCommandsCounted: lines run on several connections at once are
// each counted once in Commands (OpenTSDB's rpc.received type=telnet),
// every line a connection ran before a reply it sent already counted
// when the reply arrives, and the rest once the connection ends.
func TestTelnetCommandsCounted(t *testing.T) {
	st := newStack(t, nil)
	h := newTelnet(t, st, TelnetOptions{Version: "v"})
	const conns, lines = 4, 500
	done := make(chan string, conns)
	for i := range conns {
		go func() {
			var b strings.Builder
			for j := range lines {
				b.WriteString("put m " + strconv.Itoa(1356998400+j) + " 1 host=h" + strconv.Itoa(i) + "\n")
			}
			done <- runTelnet(t, h, b.String()+"version\n")
		}()
	}
	for range conns {
		if out := <-done; out != "v\n" {
			t.Fatalf("replies %q, want the version alone", out)
		}
	}
	if got, want := h.Commands(), int64(conns*(lines+1)); got != want {
		t.Fatalf("Commands() = %d after %d connections of %d lines, want %d", got, conns, lines+1, want)
	}
}
