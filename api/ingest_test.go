package api

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// newWriter opens a real pebble store, UIDs and head in a temp directory.
func newWriter(t *testing.T, maxMemory int64) (*service.Writer, *head.Head, *uid.UIDs) {
	t.Helper()
	return newWriterWith(t, maxMemory, uid.Options{})
}

// newWriterWith is newWriter with UID options (auto-create switches).
func newWriterWith(t *testing.T, maxMemory int64, uo uid.Options) (*service.Writer, *head.Head, *uid.UIDs) {
	t.Helper()
	return newWriterFS(t, maxMemory, uo, nil)
}

// newWriterFS is newWriterWith whose head writes its log through wrap(the
// store's FS), when wrap is not nil.
func newWriterFS(t *testing.T, maxMemory int64, uo uid.Options, wrap func(vfs.FS) vfs.FS) (*service.Writer, *head.Head, *uid.UIDs) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	log := quietLog()
	db, err := pebble.Open(dir, &pebble.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.EnsureTable(ctx, uid.TableSpec(uid.DefaultTable)); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Table(ctx, uid.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	uo.Logger = log
	u, err := uid.New(tbl, &uo)
	if err != nil {
		t.Fatal(err)
	}
	fs := db.FS()
	if wrap != nil {
		fs = wrap(fs)
	}
	h, err := head.OpenHead(fs, dir+"/wal", &head.HeadOptions{Logger: log, MaxMemory: maxMemory})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	w, err := service.NewWriter(service.Options{UIDs: u, Head: h, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return w, h, u
}

// headPoints counts the head's points of metric (no tags unless given).
func headPoints(t *testing.T, h *head.Head, u *uid.UIDs, metric string, tags ...string) int {
	t.Helper()
	var ut []uid.Tag
	for i := 0; i+1 < len(tags); i += 2 {
		ut = append(ut, uid.Tag{Key: []byte(tags[i]), Value: []byte(tags[i+1])})
	}
	key, err := u.ResolvePoint(context.Background(), nil, []byte(metric), ut)
	if err != nil {
		t.Fatal(err)
	}
	return len(h.AppendPoints(nil, key, 0, head.MaxTimestamp))
}

func sendReq(t *testing.T, method, url string, body []byte, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
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

func gz(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestPutAnswers(t *testing.T) {
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w})
	two := `[{"metric":"m","timestamp":1356998400,"value":1,"tags":{"host":"a"}},` +
		`{"metric":"m","timestamp":1356998401,"value":"2","tags":{"host":"a"}}]`
	resp, body := sendReq(t, "POST", base+"/api/put?summary", []byte(two))
	if resp.StatusCode != 200 || body != `{"success":2,"failed":0}` {
		t.Errorf("summary = %d %s", resp.StatusCode, body)
	}
	resp, body = sendReq(t, "POST", base+"/api/v1/put", []byte(`{"metric":"m","timestamp":0,"value":1,"tags":{"host":"a"}}`))
	if resp.StatusCode != 400 || body != `{"error":{"code":400,"message":"One or more data points had errors",`+
		`"details":"Please see the TSD logs or append \"details\" to the put request"}}` {
		t.Errorf("bad point without flags = %d %s", resp.StatusCode, body)
	}
	resp, body = sendReq(t, "POST", base+"/api/put", []byte(`[]`))
	if resp.StatusCode != 400 || !strings.Contains(body, "No datapoints found in content") {
		t.Errorf("empty array = %d %s", resp.StatusCode, body)
	}
	resp, body = sendReq(t, "POST", base+"/api/put", nil)
	if resp.StatusCode != 400 || body != `{"error":{"code":400,"message":"Missing request content"}}` {
		t.Errorf("empty body = %d %s", resp.StatusCode, body)
	}
	// ?details echoes a refused point as OpenTSDB serializes its
	// IncomingDataPoint: value as a string, timestamp 0 when absent, tags
	// in java.util.HashMap order (putjson.TestAppendEcho).
	resp, body = sendReq(t, "POST", base+"/api/put?details", []byte(`[{"metric":"m","timestamp":1356998402,"value":3,"tags":{"host":"b"}},`+
		`{"metric":"m","value":6.7,"tags":{"host":"a","dc":"b","rack":"c"}}]`))
	if want := `{"success":1,"failed":1,"errors":[{"datapoint":{"metric":"m","timestamp":0,"value":"6.7",` +
		`"tags":{"rack":"c","host":"a","dc":"b"}},"error":"Invalid timestamp"}]}`; resp.StatusCode != 400 || body != want {
		t.Errorf("details = %d %s\nwant 400 %s", resp.StatusCode, body, want)
	}
	// PutDataPointRpc.execute takes POST only (query.method(), so no
	// method_override either).
	for _, m := range []string{"GET", "PUT"} {
		resp, body = sendReq(t, m, base+"/api/put?method_override=post", []byte(`{"metric":"m","timestamp":1356998409,"value":1,"tags":{"host":"a"}}`))
		if want := `{"error":{"code":405,"message":"Method not allowed","details":"The HTTP method [` + m +
			`] is not permitted for this endpoint"}}`; resp.StatusCode != 405 || body != want {
			t.Errorf("%s /api/put = %d %s, want 405 %s", m, resp.StatusCode, body, want)
		}
	}
	// HttpJsonSerializer.parsePutV1: BadRequestException(message) only.
	resp, body = sendReq(t, "POST", base+"/api/put", []byte(` blah`))
	if resp.StatusCode != 400 || body != `{"error":{"code":400,"message":"The JSON must start as an object or an array"}}` {
		t.Errorf("not an object or array = %d %s", resp.StatusCode, body)
	}
	resp, body = sendReq(t, "POST", base+"/api/put", []byte(`[{"metric":"m",`))
	if resp.StatusCode != 400 {
		t.Errorf("truncated JSON = %d %s", resp.StatusCode, body)
	}
	if n := headPoints(t, h, u, "m", "host", "a"); n != 2 {
		t.Errorf("head holds %d points of m{host=a}, want 2", n)
	}
}

func TestIngestThrottled(t *testing.T) {
	w, _, _ := newWriter(t, 1) // over the limit at once, and no flusher loop
	s, base := startServer(t, Options{Ingest: w, Telnet: mustTelnet(t, w)})
	var resp *http.Response
	var body string
	for i := range 2 { // the first commit may still fit
		resp, body = sendReq(t, "POST", base+"/api/put",
			[]byte(`{"metric":"m","timestamp":135699840`+string(rune('0'+i))+`,"value":1,"tags":{"host":"a"}}`))
	}
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(body, `{"error":{"code":503,"message":"Please throttle writes","details":"head memory `) {
		t.Errorf("/api/put over the memory limit = %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	resp, body = sendReq(t, "POST", base+"/write", []byte("cpu v=1 1356998400000000000\n"))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Please throttle writes") {
		t.Errorf("/write over the memory limit = %d %s", resp.StatusCode, body)
	}
	c := dialRaw(t, s)
	defer c.Close()
	c.Write([]byte("put m 1356998402 1 host=a\nversion\n"))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "put: Please throttle writes: ") {
		t.Errorf("telnet over the memory limit: %q %v", line, err)
	}
}

func mustTelnet(t *testing.T, w *service.Writer) *service.TelnetHandler {
	h, err := service.NewTelnetHandler(w, service.TelnetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func dialRaw(t *testing.T, s *Server) net.Conn {
	t.Helper()
	s.mu.Lock()
	var addr string
	for ln := range s.mu.listeners {
		addr = ln.Addr().String()
	}
	s.mu.Unlock()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func TestIngestBodyLimits(t *testing.T) {
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w, MaxRequestBodySize: 1 << 20})
	bomb := gz(t, make([]byte, 8<<20)) // 8 MiB of zeros, a few KiB compressed
	resp, body := sendReq(t, "POST", base+"/write", bomb, "Content-Encoding", "gzip")
	if resp.StatusCode != 413 || !strings.Contains(body, "1048576") {
		t.Errorf("gzip bomb = %d %s", resp.StatusCode, body)
	}
	// The lines before the limit are stored, and the answer counts them
	// (TestIngestTooLargeSaysWhatLanded checks every protocol).
	lines := gz(t, influxLines("big", 2<<20/28))
	resp, body = sendReq(t, "POST", base+"/write?precision=ms", lines, "Content-Encoding", "gzip")
	written := writtenCount(t, body, ` points written"}`)
	if resp.StatusCode != 413 || written == 0 {
		t.Errorf("gzip body over the limit = %d %s", resp.StatusCode, body)
	}
	if n := headPoints(t, h, u, "big_v"); n != written {
		t.Errorf("%d points of the cut body stored, the 413 says %d", n, written)
	}
	_, base2 := startServer(t, Options{Ingest: w, MaxInflightBytes: 8})
	resp, body = sendReq(t, "POST", base2+"/write", []byte("cpu v=1 1356998400000000000\n"))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("budget spent = %d %s", resp.StatusCode, body)
	}
}

func TestRemoteWriteBadSeries(t *testing.T) {
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w})
	req := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		{Labels: []prompb.Label{{Name: "job", Value: "x"}}, Samples: []prompb.Sample{{Value: 1, Timestamp: 1356998400000}}},
		{Labels: []prompb.Label{{Name: "__name__", Value: "ok"}}, Samples: []prompb.Sample{{Value: 2, Timestamp: 1356998400000}}},
	}}
	raw, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	resp, body := sendReq(t, "POST", base+"/api/v1/write", snappy.Encode(nil, raw), "Content-Encoding", "snappy")
	if resp.StatusCode != 400 || !strings.Contains(body, `job="x"`) ||
		resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "1" {
		t.Errorf("bad series = %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if n := headPoints(t, h, u, "ok"); n != 1 {
		t.Errorf("good series beside a bad one: %d points, want 1", n)
	}
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestPutSync(t *testing.T) {
	w, h, u := newWriter(t, 0)
	_, base := startServer(t, Options{Ingest: w})
	one := []byte(`{"metric":"s","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`)
	resp, body := sendReq(t, "POST", base+"/api/put?sync&sync_timeout=10000", one)
	if resp.StatusCode != 204 {
		t.Errorf("sync put = %d %s", resp.StatusCode, body)
	}
	resp, body = sendReq(t, "POST", base+"/api/put?sync&summary", one)
	if resp.StatusCode != 200 || body != `{"success":1,"failed":0}` {
		t.Errorf("sync summary put = %d %s", resp.StatusCode, body)
	}
	// PutDataPointRpc's GroupCB puts "timeouts":0 in the summary whenever
	// sync_timeout is above 0, with or without sync; the summary is a
	// HashMap, written in its (Java 8) order: success, timeouts, failed,
	// errors.
	for _, tc := range []struct{ qs, want string }{
		{"sync&sync_timeout=10000&summary", `{"success":1,"timeouts":0,"failed":0}`},
		{"sync_timeout=10000&summary", `{"success":1,"timeouts":0,"failed":0}`},
		{"sync&sync_timeout=10000&details", `{"success":1,"timeouts":0,"failed":0,"errors":[]}`},
		{"sync_timeout=0&summary", `{"success":1,"failed":0}`},
	} {
		resp, body = sendReq(t, "POST", base+"/api/put?"+tc.qs, one)
		if resp.StatusCode != 200 || body != tc.want {
			t.Errorf("put?%s = %d %s, want 200 %s", tc.qs, resp.StatusCode, body, tc.want)
		}
	}
	if n := headPoints(t, h, u, "s", "host", "a"); n != 1 {
		t.Errorf("head holds %d points, want 1", n)
	}
}

// TestPutUnknownName: with auto-creation off, PutDataPointRpc catches
// NoSuchUniqueName (of the metric, or of a tag key or value) and details
// it as "Unknown metric".
func TestPutUnknownName(t *testing.T) {
	w, _, _ := newWriterWith(t, 0, uid.Options{NoAutoCreateMetrics: true, NoAutoCreateTagKs: true})
	_, base := startServer(t, Options{Ingest: w})
	resp, body := sendReq(t, "POST", base+"/api/put?details", []byte(`{"metric":"nope","timestamp":1356998400,"value":1,"tags":{"a":"b"}}`))
	want := `{"success":0,"failed":1,"errors":[{"datapoint":{"metric":"nope","timestamp":1356998400,"value":"1","tags":{"a":"b"}},"error":"Unknown metric"}]}`
	if resp.StatusCode != 400 || body != want {
		t.Errorf("unknown metric = %d %s\nwant 400 %s", resp.StatusCode, body, want)
	}
}

// gatedFS holds the log's file syncs while armed, until gate closes: a
// disk that stalls, so a sync commit outlasts its sync_timeout.
type gatedFS struct {
	vfs.FS
	armed atomic.Bool
	gate  chan struct{}
}

func (g *gatedFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := g.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &gatedFile{File: f, fs: g}, nil
}

type gatedFile struct {
	vfs.File
	fs *gatedFS
}

func (f *gatedFile) Sync() error {
	if f.fs.armed.Load() {
		<-f.fs.gate
	}
	return f.File.Sync()
}

// TestPutSyncTimeoutExpired: when sync_timeout expires, PutDataPointRpc's
// PutTimeout counts the writes still pending as timeouts and only refused
// points and failed writes as failed (failures + failed_writes); tsd
// answers it 503 (the points were not refused: retry), OpenTSDB 400.
func TestPutSyncTimeoutExpired(t *testing.T) {
	g := &gatedFS{gate: make(chan struct{})}
	w, _, _ := newWriterFS(t, 0, uid.Options{}, func(fs vfs.FS) vfs.FS { g.FS = fs; return g })
	_, base := startServer(t, Options{Ingest: w})
	g.armed.Store(true)
	defer close(g.gate) // before the cleanups close the head
	resp, body := sendReq(t, "POST", base+"/api/put?sync&sync_timeout=50&summary",
		[]byte(`[{"metric":"m","timestamp":1356998400,"value":1,"tags":{"host":"a"}},{"metric":"","timestamp":1356998400,"value":1}]`))
	if want := `{"success":0,"timeouts":1,"failed":1}`; resp.StatusCode != 503 || body != want {
		t.Errorf("expired sync_timeout = %d %s, want 503 %s", resp.StatusCode, body, want)
	}
}
