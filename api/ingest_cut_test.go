package api

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/tsd-db/tsd/ingest/service"
)

// writtenCount returns the number before suffix in body ("... 123 points
// written"), failing the test when there is none.
func writtenCount(t *testing.T, body, suffix string) int {
	t.Helper()
	m := regexp.MustCompile(`(\d+)` + regexp.QuoteMeta(suffix)).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no count before %q in %s", suffix, body)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// postCut posts body chunked and returns the answer. Bodies here are
// over the limit by less than what the server drains after answering, so
// the client reads the answer rather than a reset.
func postCut(t *testing.T, url string, body []byte) (*http.Response, string) {
	t.Helper()
	return chunked(t, url, body)
}

// TestIngestTooLargeSaysWhatLanded: a body refused half-way for its size
// (413) says exactly what of it landed, checked against the store: the
// success and failed counts of /api/put (beside OpenTSDB's error object),
// "N points written" in the Influx error of /write and /api/v2/write, and
// the written count in remote_write's headers (0: a snappy block is
// decoded only whole, so nothing of a refused one is written).
func TestIngestTooLargeSaysWhatLanded(t *testing.T) {
	w, h, u := newWriter(t, 0)
	const limit = 4 << 20
	_, base := startServer(t, Options{Ingest: w, MaxRequestBodySize: limit})

	// /api/put: elements up to 100 KiB past the limit, one of them bad.
	// Where the limit cuts depends on how the server's reads fall, over
	// about 100 elements; the metric's length puts that span (23,510 to
	// 23,530 in four race runs) well between two multiples of
	// ingestBatchPoints, so a count that is one shows a partial batch
	// lost, not a cut that fell on a batch's end. With "cut.put" the span
	// was 24,495-24,598, and a cut after 24,576 (6 x 4096) failed CI.
	const putMetric = "cut.put.padding"
	b := []byte{'['}
	for i := 0; len(b) < limit+100<<10; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if i == 7 {
			b = append(b, `{"metric":"`+putMetric+`","timestamp":1356998400,"value":"x","tags":{"host":"web0.example.com"}}`...)
			continue
		}
		b = putElement(b, putMetric, i)
	}
	resp, body := postCut(t, base+"/api/put", b)
	success := writtenCount(t, body, `,"failed":1}`)
	if resp.StatusCode != 413 || !strings.HasPrefix(body, `{"error":{"code":413,"message":"Request body too large","details":"The decompressed request body is larger than the limit of 4194304 bytes; `) ||
		!strings.Contains(body, "; "+strconv.Itoa(success)+" data points before it were written, 1 failed") {
		t.Errorf("/api/put cut = %d %s", resp.StatusCode, body)
	}
	stored := 0
	for host := range 10 {
		stored += headPoints(t, h, u, putMetric, "host", "web"+strconv.Itoa(host)+".example.com", "dc", "eu-west-1a",
			"rack", "r042", "service", "checkout-frontend", "env", "production")
	}
	// Each element is about 180 bytes: the limit cuts after about 23,000.
	t.Logf("/api/put: %.300s", body)
	if stored != success || success < 15_000 || success%ingestBatchPoints == 0 {
		t.Errorf("/api/put: %d points stored, the 413 says %d", stored, success)
	}

	for _, tc := range []struct{ path, metric, prefix string }{
		{"/write?precision=ms", "cut1", `{"error":"request body too large: The decompressed request body is larger than the limit of 4194304 bytes; `},
		{"/api/v2/write?org=o&bucket=b&precision=ms", "cut2", `{"code":"request too large","message":"request body too large: The decompressed request body is larger than the limit of 4194304 bytes; `},
	} {
		resp, body = postCut(t, base+tc.path, influxLines(tc.metric, 200_000)[:limit+100<<10])
		written := writtenCount(t, body, ` points written"}`)
		if resp.StatusCode != 413 || !strings.HasPrefix(body, tc.prefix) {
			t.Errorf("%s cut = %d %s", tc.path, resp.StatusCode, body)
		}
		t.Logf("%s: %s", tc.path, body)
		if n := headPoints(t, h, u, tc.metric+"_v"); n != written || written < 100_000 || written%ingestBatchPoints == 0 {
			t.Errorf("%s: %d points stored, the 413 says %d", tc.path, n, written)
		}
	}

	big := snappy.Encode(nil, make([]byte, limit+1))
	resp, body = sendReq(t, "POST", base+"/api/v1/write", big, "Content-Type", "application/x-protobuf",
		"Content-Encoding", "snappy")
	if resp.StatusCode != 413 || resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "0" ||
		resp.Header.Get("X-Prometheus-Remote-Write-Histograms-Written") != "0" {
		t.Errorf("remote_write over the limit = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	for p, want := range map[service.Protocol]int64{service.Put: 1, service.Influx: 2, service.RemoteWrite: 1} {
		if n := w.Stats(p).TooLarge.Load(); n != want {
			t.Errorf("%s: %d requests counted too large, want %d", p, n, want)
		}
	}
}
