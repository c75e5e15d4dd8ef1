package api

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/internal/invariants"
)

var putBigMB = flag.Int("put.bigmb", 200, "decompressed MB of TestPutStreamsLargeBody's body")

// putElement appends one data point of metric at second ts with five tags
// (host varying over 10), about 200 bytes, and Telegraf's newline.
func putElement(b []byte, metric string, i int) []byte {
	b = append(b, `{"metric":"`...)
	b = append(b, metric...)
	b = append(b, `","timestamp":`...)
	b = strconv.AppendInt(b, 1356998400+int64(i/10), 10)
	b = append(b, `,"value":`...)
	b = strconv.AppendInt(b, int64(i%1000), 10)
	b = append(b, `,"tags":{"host":"web`...)
	b = strconv.AppendInt(b, int64(i%10), 10)
	b = append(b, `.example.com","dc":"eu-west-1a","rack":"r042","service":"checkout-frontend","env":"production"}}`...)
	return append(b, '\n')
}

// TestPutStreamsLargeBody: a /api/put array far larger than the window
// (200 MB decompressed by default, sent gzipped and chunked) is decoded as
// it arrives: the process's heap in use grows by a small fraction of the
// body while it streams, and every point lands.
func TestPutStreamsLargeBody(t *testing.T) {
	if testing.Short() {
		t.Skip("streams a large body")
	}
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w})
	mb := *putBigMB
	if invariants.RaceEnabled {
		mb = min(mb, 16) // the race detector makes each point ~10x dearer
	}
	size := mb << 20
	pr, pw := io.Pipe()
	type result struct {
		points int
		peak   uint64
		err    error
	}
	done := make(chan result, 1)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
		var r result
		buf := []byte{'['}
		sent, sample := 0, 0
		for sent+len(buf) < size {
			if r.points > 0 {
				buf = append(buf, ',')
			}
			buf = putElement(buf, "big", r.points)
			r.points++
			if len(buf) < 64<<10 {
				continue
			}
			if _, r.err = zw.Write(buf); r.err != nil {
				break
			}
			sent, buf = sent+len(buf), buf[:0]
			if sent-sample >= 8<<20 {
				sample = sent
				runtime.ReadMemStats(&ms)
				r.peak = max(r.peak, ms.HeapInuse)
			}
		}
		if r.err == nil {
			_, r.err = zw.Write(append(buf, ']'))
		}
		if r.err == nil {
			r.err = zw.Close()
		}
		pw.CloseWithError(r.err)
		done <- r
	}()
	req, err := http.NewRequest("POST", base+"/api/put?summary", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := fmt.Sprintf(`{"success":%d,"failed":0}`, r.points); resp.StatusCode != 200 || string(body) != want {
		t.Fatalf("%d MB body = %d %s, want 200 %s", mb, resp.StatusCode, body, want)
	}
	grew := int64(r.peak) - int64(before)
	t.Logf("%d points, %d MB decompressed: heap in use grew by at most %.1f MB", r.points, mb, float64(grew)/(1<<20))
	// Buffering the body would grow the heap by at least its size; half
	// of it leaves room for the head holding the points and the race
	// detector's overhead (4.9 MB of 16 under -race after the metrics
	// work, above the quarter this bound was).
	if grew > int64(size)/2 {
		t.Errorf("heap in use grew by %d bytes while streaming a %d-byte body", grew, size)
	}
	total := 0
	for host := range 10 {
		total += headPoints(t, h, u, "big", "host", "web"+strconv.Itoa(host)+".example.com", "dc", "eu-west-1a",
			"rack", "r042", "service", "checkout-frontend", "env", "production")
	}
	if total != r.points {
		t.Errorf("%d points stored, want %d", total, r.points)
	}
}

// TestPutChunkedSplitEverywhere: a body sent as two chunks split at every
// byte position gets the answer of the unsplit body, byte for byte, and
// stores the same points; gzipped too.
func TestPutChunkedSplitEverywhere(t *testing.T) {
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w})
	bodyFor := func(host string) []byte {
		return []byte(`[{"metric":"split","timestamp":1356998400,"value":1.5e+3,"tags":{"host":"` + host + `"}}` + "\n" +
			`,{"metric":"split","timestamp":1356998401,"value":"42","tags":{"host":"` + host + `","k\u00e9":"v"}}` + "\n" +
			`,{"metric":"split","timestamp":"x","value":1,"tags":{"host":"` + host + `"}}` + "\n" +
			`,{"metric":"split","timestamp":1356998402,"value":-7,"tags":{"host":"` + host + `"}}` + "\n]")
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(c)
	send := func(parts [][]byte, gzipped bool) string {
		t.Helper()
		var req bytes.Buffer
		req.WriteString("POST /api/put?details HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n")
		if gzipped {
			req.WriteString("Content-Encoding: gzip\r\n")
		}
		req.WriteString("\r\n")
		for _, p := range parts {
			if len(p) > 0 {
				fmt.Fprintf(&req, "%x\r\n%s\r\n", len(p), p)
			}
		}
		req.WriteString("0\r\n\r\n")
		if _, err := c.Write(req.Bytes()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.Status + " " + string(b)
	}
	want := strings.ReplaceAll(send([][]byte{bodyFor("whole")}, false), "whole", "HOST")
	if !strings.HasPrefix(want, "400 ") || !strings.Contains(want, `{"success":3,"failed":1,"errors":[{"datapoint":{"metric":"split","timestamp":"x"`) {
		t.Fatalf("unsplit body = %s", want)
	}
	for _, gzipped := range []bool{false, true} {
		for i := range len(bodyFor("h000")) + 1 {
			host := fmt.Sprintf("h%03d", i)
			if gzipped {
				host = fmt.Sprintf("z%03d", i)
			}
			body := bodyFor(host)
			if gzipped {
				body = gz(t, body)
			}
			i := min(i, len(body))
			got := send([][]byte{body[:i], body[i:]}, gzipped)
			if got = strings.ReplaceAll(got, host, "HOST"); got != want {
				t.Fatalf("split at %d (gzip %v) = %s, want %s", i, gzipped, got, want)
			}
			if n := headPoints(t, h, u, "split", "host", host); n != 2 {
				t.Fatalf("split at %d (gzip %v): %d points of host=%s, want 2", i, gzipped, n, host)
			}
		}
	}
}

// TestPutBodyFailsPartWay: a body that stops decoding is answered with
// that failure; points of batches committed before it stay, the last
// uncommitted batch does not; an element over the limit is 413 naming it.
func TestPutBodyFailsPartWay(t *testing.T) {
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w})
	body := func(metric string, n int, tail string) []byte {
		b := []byte{'['}
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = putElement(b, metric, i)
		}
		return append(b, tail...)
	}
	hostPoints := func(metric string) int {
		total := 0
		for host := range 10 {
			total += headPoints(t, h, u, metric, "host", "web"+strconv.Itoa(host)+".example.com", "dc", "eu-west-1a",
				"rack", "r042", "service", "checkout-frontend", "env", "production")
		}
		return total
	}
	resp, msg := post(t, base+"/api/put", body("few", 100, `,{"metric":}]`))
	if resp.StatusCode != 400 || !strings.Contains(msg, "Unable to parse the given JSON") {
		t.Errorf("bad JSON after 100 points = %d %s", resp.StatusCode, msg)
	}
	if n := hostPoints("few"); n != 0 {
		t.Errorf("%d points stored of a body failing before its first commit", n)
	}
	resp, msg = post(t, base+"/api/put", body("many", ingestBatchPoints+100, `,{"metric":}]`))
	if resp.StatusCode != 400 || !strings.Contains(msg, "invalid literal at byte") {
		t.Errorf("bad JSON after %d points = %d %s", ingestBatchPoints+100, resp.StatusCode, msg)
	}
	if n := hostPoints("many"); n != ingestBatchPoints {
		t.Errorf("%d points stored, want the first batch's %d", n, ingestBatchPoints)
	}
	long := `,{"metric":"long","timestamp":1356998400,"value":1,"tags":{"k":"` + strings.Repeat("v", 2<<20) + `"}}]`
	resp, msg = post(t, base+"/api/put", body("long", 3, long), "Content-Type", "application/json")
	if resp.StatusCode != 413 || !strings.Contains(msg, "data point 3 (at byte ") ||
		!strings.Contains(msg, "is larger than the limit of 1048576 bytes") {
		t.Errorf("element over the limit = %d %s", resp.StatusCode, msg)
	}
	resp, msg = post(t, base+"/api/put?summary", body("ok", 3, "]"))
	if resp.StatusCode != 200 || msg != `{"success":3,"failed":0}` {
		t.Errorf("next request = %d %s", resp.StatusCode, msg)
	}
}

// TestPutDetailsBounded: ?details on a long body of bad points keeps at
// most putDetailLimit bytes of errors, counts every refused point in
// failed and says how many it left out, while the good points land.
func TestPutDetailsBounded(t *testing.T) {
	w, _, _ := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w})
	const bad, good = 40000, 5
	b := []byte{'['}
	for i := range bad + good {
		if i > 0 {
			b = append(b, ',')
		}
		if i < good {
			b = putElement(b, "fine", i)
			continue
		}
		// A value that is not a number: refused, echoed in details.
		b = append(b, `{"metric":"bad","timestamp":1356998400,"value":"x`...)
		b = append(b, strings.Repeat("y", 100)...)
		b = append(b, `","tags":{"host":"a"}}`...)
	}
	b = append(b, ']')
	resp, msg := post(t, base+"/api/put?details", b)
	if resp.StatusCode != 400 {
		t.Fatalf("status %d: %.200s", resp.StatusCode, msg)
	}
	if len(msg) > putDetailLimit+4096 {
		t.Errorf("answer is %d bytes, want at most about %d", len(msg), putDetailLimit)
	}
	var got struct {
		Success, Failed, ErrorsOmitted int
		Errors                         []json.RawMessage
	}
	if err := json.Unmarshal([]byte(msg), &got); err != nil {
		t.Fatalf("%v: %.200s", err, msg)
	}
	if got.Success != good || got.Failed != bad || got.ErrorsOmitted == 0 ||
		len(got.Errors)+got.ErrorsOmitted != bad {
		t.Errorf("success %d failed %d errors %d omitted %d, want %d, %d and errors+omitted = failed",
			got.Success, got.Failed, len(got.Errors), got.ErrorsOmitted, good, bad)
	}
}
