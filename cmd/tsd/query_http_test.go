package main

import (
	"compress/gzip"
	"io"
	"net/url"
	"strings"
	"testing"
)

// TestDaemonHTTPQuery puts points over /api/put and reads them back over
// /api/query by GET m= and POST (plain and gzip), checking the exact
// bodies, then the error answers. A point is a double when a double is in
// view of the group-by (the next point of any member), as in OpenTSDB's
// AggregationIterator: 10 before 2.5 is written 10.0.
func TestDaemonHTTPQuery(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.query.limits.data_points.default=50")
	base := "http://" + d.Addr
	put := `[{"metric":"q.m","timestamp":1356998400,"value":1,"tags":{"host":"a","dc":"x"}},` +
		`{"metric":"q.m","timestamp":1356998460,"value":3,"tags":{"host":"a","dc":"x"}},` +
		`{"metric":"q.m","timestamp":1356998400,"value":10,"tags":{"host":"b","dc":"x"}},` +
		`{"metric":"q.m","timestamp":1356998460,"value":2.5,"tags":{"host":"b","dc":"x"}},` +
		`{"metric":"q.m","timestamp":1356998520,"value":7,"tags":{"host":"b","dc":"x"}}]`
	if resp, body := post(t, "POST", base+"/api/put", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct{ path, want string }{
		{"/api/query?start=1356998400&end=1356998520&m=sum:q.m",
			`[{"metric":"q.m","tags":{"dc":"x"},"aggregateTags":["host"],"dps":{"1356998400":11.0,"1356998460":5.5,"1356998520":7}}]`},
		{"/api/query?start=1356998400&end=1356998520&m=" + url.QueryEscape("max:q.m{host=*}") + "&arrays",
			`[{"metric":"q.m","tags":{"dc":"x","host":"a"},"aggregateTags":[],"dps":[[1356998400,1],[1356998460,3]]},` +
				`{"metric":"q.m","tags":{"dc":"x","host":"b"},"aggregateTags":[],"dps":[[1356998400,10.0],[1356998460,2.5],[1356998520,7]]}]`},
		{"/api/v1/query?start=1356998400&end=1356998460&ms&m=" + url.QueryEscape("sum:q.m{host=a}"),
			`[{"metric":"q.m","tags":{"dc":"x","host":"a"},"aggregateTags":[],"dps":{"1356998400000":1,"1356998460000":3}}]`},
		{"/api/query?start=1356998400&end=1356998520&m=sum:1m-avg-zero:q.m{host=a}",
			`[{"metric":"q.m","tags":{"dc":"x","host":"a"},"aggregateTags":[],"dps":{"1356998400":1.0,"1356998460":3.0,"1356998520":0.0}}]`},
		{"/api/query?start=1356900000&end=1356900060&m=sum:q.m", `[]`},
	} {
		code, body := d.Get(t, c.path)
		if code != 200 || body != c.want {
			t.Errorf("GET %s = %d\n%s\nwant 200\n%s", c.path, code, body, c.want)
		}
	}
	postBody := `{"start":1356998400,"end":1356998520,"showQuery":true,"queries":[{"aggregator":"min","metric":"q.m","tags":{"host":"b"}}]}`
	want := `[{"metric":"q.m","tags":{"dc":"x","host":"b"},"aggregateTags":[],"query":{"aggregator":"min","metric":"q.m","tsuids":null,` +
		`"downsample":null,"rate":false,"filters":[{"tagk":"host","filter":"b","group_by":true,"type":"literal_or"}],"index":0,` +
		`"tags":{"host":"literal_or(b)"},"rateOptions":null,"delete":false,"explicitTags":false,"useFuzzyFilter":true,` +
		`"percentiles":null,"showHistogramBuckets":false,"useMultiGets":true,"rollupUsage":null,"preAggregate":false,"table":"tsdb"},` +
		`"dps":{"1356998400":10.0,"1356998460":2.5,"1356998520":7}}]`
	for _, gz := range []bool{false, true} {
		b, hdr := []byte(postBody), []string{"Content-Type", "application/json"}
		if gz {
			b, hdr = gzipBytes(t, postBody), append(hdr, "Content-Encoding", "gzip")
		}
		resp, body := post(t, "POST", base+"/api/query", b, false, hdr...)
		if resp.StatusCode != 200 || body != want || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("POST /api/query (gzip %v) = %d %s\n%s\nwant\n%s", gz, resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
	}
	testQueryErrors(t, d)
}

// testQueryErrors checks that bad queries get OpenTSDB's 400 (never 500),
// and the other statuses.
func testQueryErrors(t *testing.T, d *daemon) {
	for _, c := range []struct {
		path string
		code int
		msg  string
	}{
		{"/api/query?start=1356998400&m=sum:no.such", 400, `"message":"No such name for 'metrics': 'no.such'"`},
		{"/api/query?start=1356998400&m=" + url.QueryEscape("sum:q.m{host"), 400, `"code":400`},
		{"/api/query?start=yesterday&m=sum:q.m", 400, `"code":400`},
		{"/api/query?start=1356998400&m=nosuchagg:q.m", 400, `"message":"No such aggregation function: nosuchagg"`},
		{"/api/query?start=1356998460&end=1356998400&m=sum:q.m", 400, `"message":"End time [1356998400000] must be greater than the start time [1356998460000]"`},
		{"/api/query?m=sum:q.m", 400, `"message":"Missing parameter <code>start</code>"`},
		// With deletes off, OpenTSDB's QueryRpc reads: only the DELETE verb is refused.
		{"/api/query?start=1356998400&end=1356998520&m=sum:q.m&method_override=delete", 200, `[{"metric":"q.m"`},
		{"/api/query?start=1356900000&end=1357100000&m=sum:q.m", 200, `[{"metric":"q.m"`},
		{"/api/query/exp", 405, `"message":"Method not allowed"`}, // POST only
	} {
		code, body := d.Get(t, c.path)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("GET %s = %d %s, want %d with %s", c.path, code, body, c.code, c.msg)
		}
	}
	resp, body := post(t, "POST", "http://"+d.Addr+"/api/query", []byte(`{"start":1356998400,"queries":[{"aggregator":"sum"`), false)
	if resp.StatusCode != 400 || !strings.Contains(body, `"message":"Unable to parse the given JSON"`) {
		t.Errorf("truncated POST = %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, "PUT", "http://"+d.Addr+"/api/query", nil, false)
	if resp.StatusCode != 405 {
		t.Errorf("PUT /api/query = %d %s", resp.StatusCode, body)
	}
}

// TestDaemonHTTPQueryLimit checks that a query over
// tsd.query.limits.data_points.default is answered 413 naming the limit.
func TestDaemonHTTPQueryLimit(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.query.limits.data_points.default=3")
	var pts []string
	for i := 0; i < 5; i++ {
		pts = append(pts, `{"metric":"l.m","timestamp":`+itoa(1356998400+i)+`,"value":1,"tags":{"host":"a"}}`)
	}
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put", []byte("["+strings.Join(pts, ",")+"]"), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	code, body := d.Get(t, "/api/query?start=1356998400&end=1356998410&m=sum:l.m")
	want := `{"error":{"code":413,"message":"Sorry, you have attempted to fetch more than our maximum amount of 3 data points. ` +
		`Please try filtering using more tags or decrease your time range."}}`
	if code != 413 || body != want {
		t.Errorf("over the limit = %d %s\nwant 413 %s", code, body, want)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

// TestDaemonHTTPQueryGzip checks that a large answer is gzipped for a
// client that accepts it, and is the same JSON.
func TestDaemonHTTPQueryGzip(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	var pts []string
	for i := 0; i < 300; i++ {
		pts = append(pts, `{"metric":"g.m","timestamp":`+itoa(1356998400+i)+`,"value":`+itoa(i)+`,"tags":{"host":"a"}}`)
	}
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put", []byte("["+strings.Join(pts, ",")+"]"), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	path := "http://" + d.Addr + "/api/query?start=1356998400&end=1356998700&m=sum:g.m"
	_, plain := post(t, "GET", path, nil, false, "Accept-Encoding", "identity")
	resp, zipped := post(t, "GET", path, nil, false, "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || len(zipped) >= len(plain) {
		t.Fatalf("gzip answer: %v, %d bytes vs %d plain", resp.Header, len(zipped), len(plain))
	}
	zr, err := gzip.NewReader(strings.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || string(unzipped) != plain || !strings.HasSuffix(plain, `"1356998699":299}}]`) {
		t.Errorf("gunzipped answer differs (%v):\n%s\nplain:\n%s", err, unzipped, plain)
	}
}

// TestDaemonHTTPQueryDelete checks tsd.http.query.allow_delete: the
// DELETE verb answers the query, then the stored rows read are gone. The
// points reach the store at shutdown (the final flush).
func TestDaemonHTTPQueryDelete(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	put := `[{"metric":"d.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}},` +
		`{"metric":"d.m","timestamp":1356998460,"value":2,"tags":{"host":"a"}},` +
		`{"metric":"d.n","timestamp":1356998400,"value":3,"tags":{"host":"a"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = startDaemon(t, "--data", data, "--tsd.http.query.allow_delete=true")
	path := "/api/query?start=1356998400&end=1356998460&m=sum:d.m"
	resp, body := post(t, "DELETE", "http://"+d.Addr+path, nil, false)
	want := `[{"metric":"d.m","tags":{"host":"a"},"aggregateTags":[],"dps":{"1356998400":1,"1356998460":2}}]`
	if resp.StatusCode != 200 || body != want {
		t.Fatalf("DELETE = %d %s, want 200 %s", resp.StatusCode, body, want)
	}
	if code, body := d.Get(t, path); code != 200 || body != "[]" {
		t.Errorf("after the delete: %d %s, want []", code, body)
	}
	// A GET's method_override=delete is refused (405 naming the key)
	// unless tsd.http.allow_state_changing_get; with it, it deletes too
	// while deletes are on.
	path = "/api/query?start=1356998400&end=1356998460&m=sum:d.n"
	if code, body := d.Get(t, path+"&method_override=delete"); code != 405 || !strings.Contains(body, "tsd.http.allow_state_changing_get") {
		t.Fatalf("method_override=delete by default = %d %s, want 405 naming the key", code, body)
	}
	d.Stop(t)
	d = startDaemon(t, "--data", data, "--tsd.http.query.allow_delete=true", "--tsd.http.allow_state_changing_get=true")
	want = `[{"metric":"d.n","tags":{"host":"a"},"aggregateTags":[],"dps":{"1356998400":3}}]`
	if code, body := d.Get(t, path+"&method_override=delete"); code != 200 || body != want {
		t.Fatalf("method_override=delete = %d %s, want 200 %s", code, body, want)
	}
	if code, body := d.Get(t, path); code != 200 || body != "[]" {
		t.Errorf("after method_override=delete: %d %s, want []", code, body)
	}
}
