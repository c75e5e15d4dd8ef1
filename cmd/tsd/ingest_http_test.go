package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
)

func gzipBytes(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// post sends body and returns status, selected headers and the body.
func post(t *testing.T, method, url string, body []byte, chunked bool, hdr ...string) (*http.Response, string) {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // hides the length: Go sends it chunked
	}
	req, err := http.NewRequest(method, url, r)
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

func TestDaemonHTTPIngest(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	base := "http://" + d.Addr

	// Telegraf's /api/put: gzip, Go's json.Encoder newline after each element.
	telegraf := `[{"metric":"put.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}` + "\n" +
		`,{"metric":"put.m","timestamp":1356998401,"value":2.5e+00,"tags":{"host":"a"}}` + "\n]"
	resp, body := post(t, "POST", base+"/api/put", gzipBytes(t, telegraf), false,
		"Content-Type", "application/json", "Content-Encoding", "gzip")
	if resp.StatusCode != 204 || body != "" {
		t.Errorf("telegraf /api/put = %d %q", resp.StatusCode, body)
	}
	resp, body = post(t, "POST", base+"/api/put?details", []byte(
		`[{"metric":"","timestamp":1356998402,"value":1,"tags":{"host":"a"}},`+
			`{"metric":"put.m","timestamp":1356998403,"value":"7","tags":{"host":"a"}}]`), false)
	want := `{"success":1,"failed":1,"errors":[{"datapoint":{"metric":"","timestamp":1356998402,"value":"1","tags":{"host":"a"}},"error":"Metric name was empty"}]}`
	if resp.StatusCode != 400 || body != want {
		t.Errorf("/api/put?details = %d %s\nwant 400 %s", resp.StatusCode, body, want)
	}
	resp, body = post(t, "GET", base+"/api/put", nil, false)
	if resp.StatusCode != 405 || !strings.Contains(body, "The HTTP method [GET] is not permitted for this endpoint") {
		t.Errorf("GET /api/put = %d %s", resp.StatusCode, body)
	}

	// Telegraf's Influx output: chunked gzip, nanoseconds.
	lp := "cpu,host=a usage=1.5,n=3i 1356998402000000000\ncpu,host=a usage=2 1356998403000000000\n"
	resp, body = post(t, "POST", base+"/write?db=telegraf", gzipBytes(t, lp), true,
		"Content-Encoding", "gzip", "Content-Type", "text/plain; charset=utf-8")
	if resp.StatusCode != 204 || resp.Header.Get("X-Influxdb-Version") == "" {
		t.Errorf("/write = %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = post(t, "POST", base+"/api/v2/write?org=o&bucket=b&precision=s", []byte(
		"cpu,host=b usage=3 1356998404\ncpu,host=b usage= 1356998405\n"), true)
	if resp.StatusCode != 400 || !strings.HasPrefix(body, `{"code":"invalid","message":"partial write: `) ||
		!strings.Contains(body, "(line 2)") {
		t.Errorf("/api/v2/write partial = %d %s", resp.StatusCode, body)
	}
	resp, _ = post(t, "HEAD", base+"/ping", nil, false)
	if resp.StatusCode != 204 || resp.Header.Get("X-Influxdb-Version") == "" {
		t.Errorf("HEAD /ping = %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = post(t, "POST", base+"/query?q=CREATE+DATABASE+telegraf", nil, false)
	if resp.StatusCode != 200 || body != `{"results":[{"statement_id":0}]}` {
		t.Errorf("/query CREATE DATABASE = %d %s", resp.StatusCode, body)
	}

	// Prometheus remote_write 1.0 and 2.0.
	v1 := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: "up"}, {Name: "job", Value: "api"}},
		Samples: []prompb.Sample{{Value: 1, Timestamp: 1356998404000}, {Value: 0, Timestamp: 1356998405000}},
	}}}
	raw, err := v1.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	resp, body = post(t, "POST", base+"/api/v1/write", snappy.Encode(nil, raw), false,
		"Content-Type", "application/x-protobuf", "Content-Encoding", "snappy",
		"X-Prometheus-Remote-Write-Version", "0.1.0")
	if resp.StatusCode != 204 || resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "2" {
		t.Errorf("remote_write 1.0 = %d %s %v", resp.StatusCode, body, resp.Header)
	}
	syms := writev2.NewSymbolTable()
	refs := []uint32{syms.Symbolize("__name__"), syms.Symbolize("up2"), syms.Symbolize("job"), syms.Symbolize("api")}
	v2 := &writev2.Request{Symbols: syms.Symbols(), Timeseries: []writev2.TimeSeries{{
		LabelsRefs: refs, Samples: []writev2.Sample{{Value: 0.25, Timestamp: 1356998406000}}}}}
	raw, err = v2.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	resp, body = post(t, "POST", base+"/prometheus/api/v1/write", snappy.Encode(nil, raw), false,
		"Content-Type", "application/x-protobuf;proto=io.prometheus.write.v2.Request", "Content-Encoding", "snappy")
	if resp.StatusCode != 204 || resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "1" {
		t.Errorf("remote_write 2.0 = %d %s %v", resp.StatusCode, body, resp.Header)
	}
	resp, _ = post(t, "POST", base+"/api/v1/write", snappy.Encode(nil, raw), false,
		"Content-Type", "application/x-protobuf;proto=nope.Request")
	if resp.StatusCode != 415 {
		t.Errorf("remote_write unknown proto = %d", resp.StatusCode)
	}
	resp, body = post(t, "POST", base+"/api/v1/write", snappy.Encode(nil, []byte{0xff, 0xff}), false)
	if resp.StatusCode != 400 {
		t.Errorf("remote_write garbage = %d %s", resp.StatusCode, body)
	}

	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	for metric, want := range map[string][]string{
		"put.m":     {"1356998400000 1 int", "1356998401000 2.5 float32", "1356998403000 7 int"},
		"cpu_usage": {"1356998402000 1.5 float64", "1356998403000 2 float64", "1356998404000 3 float64"},
		"cpu_n":     {"1356998402000 3 int"},
		"up":        {"1356998404000 1 float64", "1356998405000 0 float64"},
		"up2":       {"1356998406000 0.25 float64"},
	} {
		equalLines(t, metric, scanPoints(t, data, metric), want)
	}
}
