package load

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsd-db/tsd/bench/gen"
)

// telnetServer is a tiny real telnet listener: it counts put lines, answers
// "version" with two lines, and rejects puts whose line contains reject.
type telnetServer struct {
	ln     net.Listener
	puts   atomic.Int64
	reject string
	wg     sync.WaitGroup
}

func startTelnet(t *testing.T, reject string) *telnetServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &telnetServer{ln: ln, reject: reject}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *telnetServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *telnetServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	sc := bufio.NewScanner(c)
	w := bufio.NewWriter(c)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "version":
			w.WriteString("net.opentsdb.tools BuildData built at revision test\nBuilt on now by test\n")
			w.Flush()
		case s.reject != "" && strings.Contains(line, s.reject):
			w.WriteString("put: illegal argument: rejected by test\n")
			w.Flush()
		case strings.HasPrefix(line, "put "):
			s.puts.Add(1)
		}
	}
}

func testGen(t *testing.T) *gen.Gen {
	g, err := gen.New(gen.Config{Hosts: 2, Span: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return g // 2 hosts x 10 metrics x 60 steps = 1200 points
}

func TestTelnetBarrier(t *testing.T) {
	srv := startTelnet(t, "")
	g := testGen(t)
	o := Options{Addr: srv.ln.Addr().String(), Conns: 3, PID: os.Getpid()}
	res, err := Run(context.Background(), o, NewGenSource(g, gen.FormatTelnet, 100, 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Points != 1200 || res.Requests != 12 || res.Errors != 0 || len(res.Latencies) != 12 {
		t.Fatalf("result %+v", res)
	}
	if got := srv.puts.Load(); got != 1200 {
		t.Fatalf("server counted %d puts, want 1200 (every put before its barrier)", got)
	}
	if res.Server == nil || res.Server.PeakRSS <= 0 || res.Server.CPUSeconds < 0 {
		t.Fatalf("server cost %+v", res.Server)
	}
	if res.Percentile(0.5) <= 0 || res.Percentile(0.99) < res.Percentile(0.5) {
		t.Fatalf("p50 %v p99 %v", res.Percentile(0.5), res.Percentile(0.99))
	}
}

func TestTelnetErrors(t *testing.T) {
	srv := startTelnet(t, "hostname=host_1 ")
	o := Options{Addr: srv.ln.Addr().String(), Conns: 2}
	res, err := Run(context.Background(), o, NewGenSource(testGen(t), gen.FormatTelnet, 100, 0))
	if err != nil {
		t.Fatal(err)
	}
	// Every batch of 100 lines holds host_1 lines, so every batch fails.
	if res.Errors != 12 || res.Points != 0 || !strings.Contains(res.ErrorSamples[0], "put: illegal argument") {
		t.Fatalf("result %+v", res)
	}
	o.NoBarrier = true
	res, err = Run(context.Background(), o, NewGenSource(testGen(t), gen.FormatTelnet, 100, 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 600 || res.Points != 1200 {
		t.Fatalf("no barrier: %d error lines, %d points; want 600, 1200", res.Errors, res.Points)
	}
}

// httpServer counts the points of every format as a real receiver would
// decode them, and fails requests while fail is set.
type httpServer struct {
	points atomic.Int64
	reqs   atomic.Int64
	fail   atomic.Bool
	bad    atomic.Value // first header or decode problem
}

func (s *httpServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.reqs.Add(1)
	body, _ := io.ReadAll(r.Body)
	if s.fail.Load() {
		http.Error(w, `{"error":{"code":503,"message":"Please throttle writes"}}`, http.StatusServiceUnavailable)
		return
	}
	n, err := countPoints(r, body)
	if err != nil {
		s.bad.CompareAndSwap(nil, r.URL.String()+": "+err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.points.Add(int64(n))
	w.WriteHeader(http.StatusNoContent)
}

func countPoints(r *http.Request, body []byte) (int, error) {
	switch r.URL.Path {
	case "/api/put":
		var pts []map[string]any
		err := json.Unmarshal(body, &pts)
		return len(pts), err
	case "/write":
		if r.URL.Query().Get("precision") != "ns" {
			return 0, io.ErrUnexpectedEOF
		}
		dec := lineprotocol.NewDecoderWithBytes(body)
		n := 0
		for dec.Next() {
			for {
				k, _, err := dec.NextField()
				if err != nil {
					return n, err
				}
				if k == nil {
					break
				}
				n++
			}
		}
		return n, dec.Err()
	case "/api/v1/write":
		if r.Header.Get("Content-Encoding") != "snappy" || r.Header.Get("X-Prometheus-Remote-Write-Version") == "" {
			return 0, io.ErrUnexpectedEOF
		}
		raw, err := snappy.Decode(nil, body)
		if err != nil {
			return 0, err
		}
		var req prompb.WriteRequest
		if err := req.Unmarshal(raw); err != nil {
			return 0, err
		}
		return len(req.Timeseries), nil
	}
	return 0, io.EOF
}

func TestHTTPFormats(t *testing.T) {
	for _, f := range []gen.Format{gen.FormatJSON, gen.FormatInflux, gen.FormatRemoteWrite} {
		srv := &httpServer{}
		ts := httptest.NewServer(srv)
		o := Options{Addr: strings.TrimPrefix(ts.URL, "http://"), Format: f, Conns: 2, Preload: f == gen.FormatInflux}
		res, err := Run(context.Background(), o, NewGenSource(testGen(t), f, 100, 0))
		ts.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b := srv.bad.Load(); b != nil {
			t.Fatalf("%s: server saw a bad request: %v", f, b)
		}
		if res.Points != 1200 || srv.points.Load() != 1200 || res.Errors != 0 || res.Requests != srv.reqs.Load() {
			t.Fatalf("%s: result %+v, server %d points in %d requests", f, res, srv.points.Load(), srv.reqs.Load())
		}
	}
}

func TestHTTPErrorsAndLimit(t *testing.T) {
	srv := &httpServer{}
	srv.fail.Store(true)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	o := Options{Addr: strings.TrimPrefix(ts.URL, "http://"), Format: gen.FormatJSON, Conns: 1}
	res, err := Run(context.Background(), o, NewGenSource(testGen(t), gen.FormatJSON, 100, 250))
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 3 || res.Points != 0 || !strings.Contains(res.ErrorSamples[0], "503") {
		t.Fatalf("result %+v", res)
	}
}

func TestLineSource(t *testing.T) {
	in := "put a 1 1 h=x\n\nput a 2 2 h=x\nput a 3 3 h=x" // no final newline
	s := NewLineSource(strings.NewReader(in), false, 2)
	b, n, err := s.Next(nil)
	if err != nil || n != 2 || string(b) != "put a 1 1 h=x\nput a 2 2 h=x\n" {
		t.Fatalf("first batch %q %d %v", b, n, err)
	}
	b, n, err = s.Next(nil)
	if err != nil || n != 1 || string(b) != "put a 3 3 h=x\n" {
		t.Fatalf("second batch %q %d %v", b, n, err)
	}
	if _, n, err = s.Next(nil); n != 0 || err != nil {
		t.Fatalf("end: %d %v", n, err)
	}
	inf := NewLineSource(strings.NewReader("cpu,host=a\\ b,x=y a=1i,b=2,c=3 10\n"), true, 10)
	if _, n, _ := inf.Next(nil); n != 3 {
		t.Fatalf("influx line counted %d fields, want 3", n)
	}
}

func TestDialFailure(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if _, err := Run(context.Background(), Options{Addr: addr}, NewGenSource(testGen(t), gen.FormatTelnet, 10, 0)); err == nil {
		t.Fatal("Run succeeded against a closed port")
	}
}

// TestGenSourceTelnetBytes: the telnet source's own line writer sends
// exactly the bytes of gen's encoder, sharded or not, in ms and in seconds.
func TestGenSourceTelnetBytes(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Hosts: 3, Span: 2 * time.Hour, Values: gen.ValuesFloat},
		{Hosts: 5, Span: 10 * time.Minute, Interval: 1500 * time.Millisecond, Shape: gen.ShapeCounters},
	} {
		for _, shards := range []int{1, 2} {
			for i := range shards {
				want, _ := gen.New(cfg)
				got, _ := gen.New(cfg)
				want.Shard(i, shards)
				got.Shard(i, shards)
				enc := gen.NewEncoder(want, gen.FormatTelnet)
				src := NewGenSource(got, gen.FormatTelnet, 7, 0)
				var wb, gb []byte
				for {
					var n, m int
					var err error
					wb, n, err = enc.AppendBatch(wb, 7)
					if err != nil {
						t.Fatal(err)
					}
					if gb, m, err = src.Next(gb); err != nil || m != n {
						t.Fatalf("got %d points (%v), want %d", m, err, n)
					}
					if n == 0 {
						break
					}
				}
				if string(gb) != string(wb) {
					t.Fatalf("%+v shard %d/%d: bytes differ (%d vs %d)", cfg, i, shards, len(gb), len(wb))
				}
				if len(gb) == 0 {
					t.Fatal("no lines")
				}
			}
		}
	}
}
