package api

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// influxLines returns n lines of measurement m, field v, one point each.
func influxLines(m string, n int) []byte {
	var b []byte
	for i := range n {
		b = append(b, m...)
		b = append(b, " v="...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "i "...)
		b = strconv.AppendInt(b, 1356998400000+int64(i), 10)
		b = append(b, '\n')
	}
	return b
}

// TestIngestStreamsBodies: Influx bodies are parsed as they stream in, so
// a body larger than the whole in-flight budget still lands, plain or
// chunked; the size limit applies to decompressed bytes on every path.
func TestIngestStreamsBodies(t *testing.T) {
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w, MaxInflightBytes: 2 << 20, MaxRequestBodySize: 8 << 20})
	lines := influxLines("s", 170_000) // over 4 MiB
	if len(lines) < 4<<20 {
		t.Fatalf("body of %d bytes, want over 4 MiB", len(lines))
	}
	resp, body := sendReq(t, "POST", base+"/write?precision=ms", lines)
	if resp.StatusCode != 204 {
		t.Fatalf("4 MiB body, 2 MiB budget = %d %s", resp.StatusCode, body)
	}
	if n := headPoints(t, h, u, "s_v"); n != 170_000 {
		t.Errorf("%d points stored, want 170000", n)
	}
	resp, body = chunked(t, base+"/api/v2/write?precision=ms", influxLines("c", 170_000))
	if resp.StatusCode != 204 {
		t.Errorf("chunked 4 MiB body = %d %s", resp.StatusCode, body)
	}
	if n := headPoints(t, h, u, "c_v"); n != 170_000 {
		t.Errorf("%d points stored from the chunked body, want 170000", n)
	}

	// A smaller limit, so the bodies over it stay small: /write and /api/put
	// refuse them while streaming, plain, chunked or gzipped.
	_, base = startServer(t, Options{Ingest: w, MaxRequestBodySize: 8 << 20})

	// Over the limit by less than what the server drains after answering,
	// so the client reads the answer rather than a reset.
	big := bytes.Repeat([]byte(" "), 8<<20+256<<10)
	for _, tc := range []struct {
		name, path string
		body       []byte
		send       func(*testing.T, string, []byte, ...string) (*http.Response, string)
		hdr        []string
	}{
		{"chunked /write", "/write", big, chunked, nil},
		{"chunked /api/put", "/api/put", big, chunked, nil},
		{"gzip /api/put", "/api/put", gz(t, big), post, []string{"Content-Encoding", "gzip"}},
		{"gzip chunked /write", "/write", gz(t, big), chunked, []string{"Content-Encoding", "gzip"}},
	} {
		resp, body := tc.send(t, base+tc.path, tc.body, tc.hdr...)
		if resp.StatusCode != 413 || !strings.Contains(body, "larger than the limit of 8388608 bytes") {
			t.Errorf("%s over the limit = %d %s", tc.name, resp.StatusCode, body)
		}
	}
	// A declared length over the limit (for remote_write, over the
	// limit's largest snappy encoding) is refused before the body is read.
	for _, path := range []string{"/write", "/api/put", "/api/v1/write"} {
		status, conn := rawRequest(t, base, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n"+
			strings.Repeat(" ", 8<<10)) // fasthttp reads 8 KiB before the handler runs
		if status != "HTTP/1.1 413 Request Entity Too Large" || conn != "close" {
			t.Errorf("POST %s Content-Length 10 MiB = %q, Connection %q", path, status, conn)
		}
	}
}

// rawRequest writes req on a new connection and returns the answer's
// status line and Connection header.
func rawRequest(t *testing.T, base, req string) (string, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	conn := resp.Header.Get("Connection")
	if resp.Close && conn == "" {
		conn = "close"
	}
	return resp.Proto + " " + resp.Status, conn
}

func post(t *testing.T, url string, body []byte, hdr ...string) (*http.Response, string) {
	return sendReq(t, "POST", url, body, hdr...)
}

// chunked posts body without a length, so it is sent chunked.
func chunked(t *testing.T, url string, body []byte, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, io.MultiReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestUnreadBodyKeepsConnection: a request answered before its body is
// read (a bad precision) leaves the connection usable for the next one;
// a body over the limit of a non-ingest endpoint is 413 even when chunked.
func TestUnreadBodyKeepsConnection(t *testing.T) {
	w, _, _ := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w, MaxRequestBodySize: 64})
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	body := "cpu v=1 1356998400\n"
	req := "POST /write?precision=fortnight HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) +
		"\r\n\r\n" + body + "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for _, want := range []int{400, 204} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the answer %d: %v", want, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("status %d, want %d", resp.StatusCode, want)
		}
	}
	resp, msg := chunked(t, base+"/api/version", bytes.Repeat([]byte("x"), 100))
	if resp.StatusCode != 413 || !strings.Contains(msg, "larger than the limit of 64 bytes") {
		t.Errorf("chunked body over the limit = %d %s", resp.StatusCode, msg)
	}
}
