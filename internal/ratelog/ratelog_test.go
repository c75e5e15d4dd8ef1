package ratelog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// lines decodes the JSON log lines written so far.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func newTest(opts Options) (*Logger, *bytes.Buffer, *clock) {
	buf := &bytes.Buffer{}
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	opts.Logger = slog.New(slog.NewJSONHandler(buf, nil))
	opts.Now = c.now
	return New(opts), buf, c
}

func TestPairBudgetAndSuppressedCount(t *testing.T) {
	l, buf, c := newTest(Options{Every: time.Minute, Burst: 1, KindBurst: 100})
	for range 5 {
		l.Warn("conn.limit", "10.0.0.1", "connection refused", "limit", 3)
	}
	if n := len(lines(t, buf)); n != 1 {
		t.Fatalf("5 lines in one window wrote %d, want 1", n)
	}
	c.advance(time.Minute)
	l.Warn("conn.limit", "10.0.0.1", "connection refused", "limit", 3)
	got := lines(t, buf)

	if len(got) != 2 {
		t.Fatalf("after the window: %d lines, want 2", len(got))
	}
	last := got[1]
	if last["suppressed"] != float64(4) || last["kind"] != "conn.limit" || last["client"] != "10.0.0.1" ||
		last["limit"] != float64(3) || last["level"] != "WARN" {
		t.Errorf("second line = %v, want suppressed 4, kind, client, limit and WARN", last)
	}
	if _, ok := got[0]["suppressed"]; ok {
		t.Errorf("first line carries suppressed: %v", got[0])
	}
}

func TestClientsAreSeparate(t *testing.T) {
	l, buf, _ := newTest(Options{Burst: 2, KindBurst: 100})
	for i := range 3 {
		for range 3 {
			l.Info("put.refused", fmt.Sprintf("10.0.0.%d", i), "refused")
		}
	}
	if n := len(lines(t, buf)); n != 6 {
		t.Errorf("3 clients x 3 lines with burst 2: %d lines, want 6", n)
	}
}

// TestKindBudgetBoundsAFlood: 20,000 clients of one kind write at most
// KindBurst lines a window, and another kind is not starved by them.
func TestKindBudgetBoundsAFlood(t *testing.T) {
	l, buf, c := newTest(Options{KindBurst: 10, MaxKeys: 1000})
	for i := range 20_000 {
		l.Warn("conn.limit", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255), "refused")
	}
	l.Warn("disk.full", "", "disk full")
	got := lines(t, buf)
	if len(got) != 11 {
		t.Fatalf("flood wrote %d lines, want 10 of the kind and 1 other", len(got))
	}
	if got[10]["kind"] != "disk.full" {
		t.Errorf("last line %v, want the other kind", got[10])
	}
	if n := len(l.mu.pairs); n > 1000 {
		t.Errorf("%d pairs remembered, want at most MaxKeys 1000", n)
	}
	// Next window: the drops are reported, none lost from the count.
	c.advance(time.Minute)
	var total float64
	for i := range 20_000 {
		l.Warn("conn.limit", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255), "refused")
	}
	for _, m := range lines(t, buf)[11:] {
		if s, ok := m["suppressed"].(float64); ok {
			total += s
		}
	}
	if total == 0 {
		t.Errorf("second window reported no suppressed lines")
	}
}

func TestEvictionBoundsPairs(t *testing.T) {
	l, buf, c := newTest(Options{KindBurst: 1000, MaxKeys: 2})
	l.Warn("k", "a", "x")
	l.Warn("k", "a", "x") // dropped
	l.Warn("k", "b", "x")
	l.Warn("k", "c", "x") // table full, windows open: kind budget only
	c.advance(time.Minute)
	l.Warn("k", "d", "x") // a and b's windows ended: both evicted
	if n := len(l.mu.pairs); n != 1 {
		t.Fatalf("%d pairs after eviction, want 1", n)
	}
	got := lines(t, buf)
	if len(got) != 4 || got[3]["client"] != "d" || got[1]["suppressed"] != float64(1) {
		t.Errorf("lines %v, want a, b (suppressed 1), c, d", got)
	}
}

func TestDisabledLevelCostsNothing(t *testing.T) {
	buf := &bytes.Buffer{}
	l := New(Options{Logger: slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if l.Info("k", "c", "x") {
		t.Error("INFO written below the handler's level")
	}
	if len(l.mu.pairs) != 0 {
		t.Error("a disabled line took a budget")
	}
}

func TestConcurrentUse(t *testing.T) {
	l, buf, _ := newTest(Options{KindBurst: 5})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				l.Warn("k", fmt.Sprint(g, i%7), "x")
			}
		})
	}
	wg.Wait()
	if n := len(lines(t, buf)); n != 5 {
		t.Errorf("8 goroutines wrote %d lines, want KindBurst 5", n)
	}
}

func TestClient(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 5555}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 80}, "2001:db8::1"},
		{&net.UnixAddr{Name: "/tmp/s", Net: "unix"}, "/tmp/s"},
		{nil, ""},
	} {
		if got := Client(tc.addr); got != tc.want {
			t.Errorf("Client(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
