package api

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// These benchmarks send ingest traffic through the whole listener (sniff,
// connection wrapper, fasthttp or the telnet handler) over loopback TCP, so
// what the server does per Read and per request shows against the cost of
// storing the points.

// benchWriter opens a real pebble store, UIDs and head in a temp directory.
func benchWriter(b *testing.B) *service.Writer {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	log := slog.New(slog.DiscardHandler)
	db, err := pebble.Open(dir, &pebble.Options{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.EnsureTable(ctx, uid.TableSpec(uid.DefaultTable)); err != nil {
		b.Fatal(err)
	}
	tbl, err := db.Table(ctx, uid.DefaultTable)
	if err != nil {
		b.Fatal(err)
	}
	u, err := uid.New(tbl, &uid.Options{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	h, err := head.OpenHead(db.FS(), dir+"/wal", &head.HeadOptions{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	w, err := service.NewWriter(service.Options{UIDs: u, Head: h, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// benchServer runs a Server with opts on 127.0.0.1 and dials it once.
func benchServer(b *testing.B, opts Options) net.Conn {
	b.Helper()
	opts.Addr = "127.0.0.1:0"
	opts.Logger = slog.New(slog.DiscardHandler)
	s, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	b.Cleanup(func() { s.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// appendPutLines appends n telnet put lines from timestamp *ts on, in the
// shape "put sys.cpu.user <ts> <i> host=web01 cpu=<0..7>".
func appendPutLines(dst []byte, n int, ts *int64) []byte {
	for i := range n {
		*ts++
		dst = append(dst, "put sys.cpu.user "...)
		dst = strconv.AppendInt(dst, *ts, 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, " host=web01 cpu="...)
		dst = strconv.AppendInt(dst, int64(i%8), 10)
		dst = append(dst, '\n')
	}
	return dst
}

// BenchmarkServerTelnetPut sends batches of 10,000 put lines on one
// telnet connection, each followed by the version barrier.
func BenchmarkServerTelnetPut(b *testing.B) {
	w := benchWriter(b)
	h, err := service.NewTelnetHandler(w, service.TelnetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	c := benchServer(b, Options{Telnet: h})
	const batch = 10000
	var body []byte
	ts := int64(1356998400)
	br := bufio.NewReader(c)
	b.ReportAllocs()
	for b.Loop() {
		body = appendPutLines(body[:0], batch, &ts)
		body = append(body, "version\n"...)
		b.SetBytes(int64(len(body)))
		if _, err := c.Write(body); err != nil {
			b.Fatal(err)
		}
		if _, err := br.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkServerHTTPWrite posts batches of 10,000 InfluxDB lines to
// /write on one keep-alive connection: a body of about 400 KB, read in
// many Reads.
func BenchmarkServerHTTPWrite(b *testing.B) {
	c := benchServer(b, Options{Ingest: benchWriter(b)})
	const batch = 10000
	br := bufio.NewReader(c)
	var req []byte
	ts := int64(1356998400000)
	b.ReportAllocs()
	for b.Loop() {
		var body []byte
		for i := range batch {
			ts++
			body = append(body, "cpu,host=web01,cpu="...)
			body = strconv.AppendInt(body, int64(i%8), 10)
			body = append(body, " user="...)
			body = strconv.AppendInt(body, int64(i), 10)
			body = append(body, "i "...)
			body = strconv.AppendInt(body, ts, 10)
			body = append(body, '\n')
		}
		req = append(req[:0], "POST /write?precision=ms HTTP/1.1\r\nHost: x\r\nContent-Length: "...)
		req = strconv.AppendInt(req, int64(len(body)), 10)
		req = append(append(req, "\r\n\r\n"...), body...)
		b.SetBytes(int64(len(req)))
		roundTrip(b, c, br, req, 204)
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkServerHTTPSmall sends small requests (GET /api/version) on one
// keep-alive connection: the per-request cost of the listener.
func BenchmarkServerHTTPSmall(b *testing.B) {
	c := benchServer(b, Options{})
	br := bufio.NewReader(c)
	req := []byte("GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		roundTrip(b, c, br, req, 200)
	}
}

// roundTrip writes req on c and reads one answer of status want.
func roundTrip(b *testing.B, c net.Conn, br *bufio.Reader, req []byte, want int) {
	if _, err := c.Write(req); err != nil {
		b.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("status %d, want %d", resp.StatusCode, want)
	}
}

// BenchmarkConnReadDeadline is what the read deadline adds to each Read
// of a connection past its head (an HTTP body, telnet lines): arming the
// idle deadline and following the phases, on a real TCP socket, without
// the read itself.
func BenchmarkConnReadDeadline(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	s := &Server{opts: *(&Options{}).EnsureDefaults()}
	c := &conn{Conn: nc, srv: s}
	c.rd.kind = kindTelnet
	c.endHead()
	p := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		c.armRead()
		c.progress(p)
	}
}
