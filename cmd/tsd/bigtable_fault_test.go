package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultProxy forwards TCP connections to a target until cut: cut closes
// its listener and every open connection, so the store is unreachable
// (new connections are refused), and restore listens again on the same
// address. It is a real network fault between tsd and the emulator.
type faultProxy struct {
	addr, target string
	mu           struct {
		sync.Mutex
		ln    net.Listener
		conns map[net.Conn]struct{}
	}
	wg sync.WaitGroup
}

func startFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	p := &faultProxy{target: target}
	p.mu.conns = map[net.Conn]struct{}{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(func() { p.cut(); p.wg.Wait() })
	return p
}

func (p *faultProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.mu.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.forward(c)
		}
	})
}

// forward copies both ways between c and a new connection to the target.
func (p *faultProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	for _, dir := range [][2]net.Conn{{c, up}, {up, c}} {
		p.wg.Go(func() {
			io.Copy(dir[0], dir[1])
			dir[0].Close()
			dir[1].Close()
		})
	}
}

// track records both ends, or closes them when the proxy was cut meanwhile.
func (p *faultProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.ln == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.mu.conns[c] = struct{}{}
	}
	return true
}

// cut closes the listener and every connection.
func (p *faultProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.ln != nil {
		p.mu.ln.Close()
		p.mu.ln = nil
	}
	for c := range p.mu.conns {
		c.Close()
	}
	clear(p.mu.conns)
}

// restore listens again on the proxy's address.
func (p *faultProxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// faultLoad writes points of known series and remembers the acknowledged
// ones.
type faultLoad struct {
	t0     int64
	next   int              // next point number
	acked  map[string]int64 // "host/ts" -> value
	series int
}

// batch returns n points spread over the series, 10ms apart per series.
func (l *faultLoad) batch(metric string, n int) ([]byte, map[string]int64) {
	pts := make([]map[string]any, 0, n)
	vals := make(map[string]int64, n)
	for range n {
		i := l.next
		l.next++
		host := fmt.Sprintf("h%d", i%l.series)
		ts := l.t0 + int64(i/l.series)*10
		v := int64(i*7919) % 100_003
		pts = append(pts, map[string]any{"metric": metric, "timestamp": ts, "value": v,
			"tags": map[string]string{"host": host}})
		vals[fmt.Sprintf("%s/%d", host, ts)] = v
	}
	body, _ := json.Marshal(pts)
	return body, vals
}

// put posts a batch with ?sync and returns the answer; acknowledged
// points (204) are remembered.
func (l *faultLoad) put(t *testing.T, d *daemon, metric string, n int) (*http.Response, string) {
	t.Helper()
	body, vals := l.batch(metric, n)
	resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/put?sync", body, false)
	if resp.StatusCode == http.StatusNoContent {
		for k, v := range vals {
			l.acked[k] = v
		}
	}
	return resp, out
}

// check queries every series and fails on an acknowledged point missing
// or changed.
func (l *faultLoad) check(t *testing.T, d *daemon, metric string) {
	t.Helper()
	got := map[string]map[string]float64{}
	code, body := d.Get(t, fmt.Sprintf("/api/query?start=%d&end=%d&ms&m=sum:%s{host=*}", l.t0, l.t0+3600_000, metric))
	if code != http.StatusOK {
		t.Fatalf("query on %s: %d %.300s", d.Addr, code, body)
	}
	var res []struct {
		Tags map[string]string  `json:"tags"`
		DPS  map[string]float64 `json:"dps"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("query: %v in %.300s", err, body)
	}
	for _, r := range res {
		got[r.Tags["host"]] = r.DPS
	}
	missing := 0
	for k, v := range l.acked {
		host, ts, _ := strings.Cut(k, "/")
		if g, ok := got[host][ts]; !ok || g != float64(v) {
			if missing++; missing <= 5 {
				t.Errorf("%s: acknowledged %s at %s = %d, read %v (present %v)", d.Addr, host, ts, v, g, ok)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%s: %d of %d acknowledged points missing or wrong", d.Addr, missing, len(l.acked))
	}
}

// TestBigtableOutage is issue 3's fault: the emulator becomes unreachable
// mid-ingest (a proxy between tsd and the emulator is cut). Points of known
// series are still acknowledged from the head and its log until the head
// memory limit is reached; then /api/put answers 503 with Retry-After and
// telnet "Please throttle writes"; a new name (which needs the store for
// its UID) is answered 503 at once, not 400 and not after minutes. When
// the emulator is back, ingest works again and every acknowledged point
// is read back, from the daemon and, after it flushed, from the store
// alone through a daemon with an empty log.
func TestBigtableOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon and an emulator")
	}
	t.Parallel() // its own emulator; most of it waits out the outage
	begin := time.Now()
	elapsed := func() time.Duration { return time.Since(begin).Round(time.Millisecond) }
	emulator := startBTEmulator(t)
	proxy := startFaultProxy(t, emulator.addr)
	viaProxy := &btEmulator{addr: proxy.addr}
	d := viaProxy.daemon(t, filepath.Join(t.TempDir(), "a"),
		"--tsd.storage.head.max_memory=512KiB", "--tsd.storage.flush.grace=1s")
	const metric = "fault.known"
	l := &faultLoad{t0: time.Now().Add(-3 * time.Hour).Truncate(time.Hour).UnixMilli(),
		acked: map[string]int64{}, series: 10}
	if resp, out := l.put(t, d, metric, 100); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("first put: %d %s", resp.StatusCode, out)
	}
	putOne(t, d, "fault.other", "h0", l.t0, http.StatusNoContent)

	proxy.cut()
	t.Logf("%v: store cut", elapsed())
	// The stats answer while the store does not (they once waited minutes
	// on the UID MAXID read): generously bounded, a hang fails here.
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get("http://" + d.Addr + "/api/stats")
	if err != nil {
		t.Fatalf("/api/stats during the outage: %v", err)
	}
	resp.Body.Close()
	flushedAtCut := d.stat(t, "tsd.flush.points")
	throttled := false
	for i := 0; i < 500 && !throttled; i++ {
		resp, out := l.put(t, d, metric, 2000)
		switch resp.StatusCode {
		case http.StatusNoContent:
		case http.StatusServiceUnavailable:
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After: %s", out)
			}
			throttled = true
			t.Logf("%v: 503 after %d acknowledged points: %s", elapsed(), len(l.acked), out)
		default:
			t.Fatalf("put during the outage: %d %s", resp.StatusCode, out)
		}
	}
	if !throttled {
		t.Fatalf("no 503 after %d acknowledged points with the store down\n%s", len(l.acked), d.Logs)
	}
	got := telnetSession(t, d.Addr, fmt.Sprintf("put %s %d 1 host=h0", metric, l.t0+3599_000))
	if len(got) != 3 || !strings.HasPrefix(got[0], "put: Please throttle writes: ") {
		t.Errorf("telnet put while throttled: %q", got)
	}
	putOne(t, d, "fault.new", "h0", l.t0, http.StatusServiceUnavailable)
	t.Logf("%v: new name refused", elapsed())
	// Known names, new series: the series index must record it first.
	putOne(t, d, "fault.other", "h1", l.t0, http.StatusServiceUnavailable)
	t.Logf("%v: new series of known names refused", elapsed())

	proxy.restore(t)
	t.Logf("%v: store restored", elapsed())
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, out := l.put(t, d, metric, 100)
		if resp.StatusCode == http.StatusNoContent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ingest still refused 90s after the store came back: %d %s\n%s", resp.StatusCode, out, d.Logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%v: ingest accepted again", elapsed())
	// The flusher retried on its own: the rows held during the outage
	// reach the store without a shutdown, and the head drains below its
	// limit.
	for d.stat(t, "tsd.flush.points") < flushedAtCut+100_000 || d.stat(t, "tsd.head.memory-bytes") > 512<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("flushed %d points since the cut, head %d bytes, 90s after the store came back\n%s",
				d.stat(t, "tsd.flush.points")-flushedAtCut, d.stat(t, "tsd.head.memory-bytes"), d.Logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%v: %d points flushed since the cut", elapsed(), d.stat(t, "tsd.flush.points")-flushedAtCut)
	putOne(t, d, "fault.new", "h0", l.t0, http.StatusNoContent)
	putOne(t, d, "fault.other", "h1", l.t0, http.StatusNoContent)
	l.check(t, d, metric)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	t.Logf("%v: flushed and stopped; %d points acknowledged", elapsed(), len(l.acked))
	// A daemon with an empty log reads only the store.
	fresh := viaProxy.daemon(t, filepath.Join(t.TempDir(), "b"))
	l.check(t, fresh, metric)
}

// stat returns the value of a counter of /api/stats (the first series of
// that name).
func (d *daemon) stat(t *testing.T, metric string) int64 {
	t.Helper()
	code, body := d.Get(t, "/api/stats")
	var stats []struct {
		Metric string `json:"metric"`
		Value  string `json:"value"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &stats) != nil {
		t.Fatalf("/api/stats = %d %.300s", code, body)
	}
	for _, s := range stats {
		if s.Metric == metric {
			n, err := strconv.ParseInt(s.Value, 10, 64)
			if err != nil {
				t.Fatalf("%s = %q", metric, s.Value)
			}
			return n
		}
	}
	t.Fatalf("/api/stats lacks %s", metric)
	return 0
}

// putOne puts one point and wants the answer code within 20s.
func putOne(t *testing.T, d *daemon, metric, host string, t0 int64, want int) {
	t.Helper()
	body := fmt.Sprintf(`{"metric":%q,"timestamp":%d,"value":1,"tags":{"host":%q}}`, metric, t0, host)
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Post("http://"+d.Addr+"/api/put?sync", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("put of %s{host=%s}: %v", metric, host, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("put of %s{host=%s}: %d %s, want %d", metric, host, resp.StatusCode, out, want)
	}
	if want == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		t.Errorf("%s{host=%s}: 503 without Retry-After", metric, host)
	}
}
