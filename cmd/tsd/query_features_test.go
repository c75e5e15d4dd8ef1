package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// putSync posts points to /api/put?sync and expects 204.
func putSync(t *testing.T, d *daemon, body string) {
	t.Helper()
	if resp, b := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(body), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, b)
	}
}

// TestDaemonQueryDeleteHead deletes points that are still in the head
// (their row waits for the flush grace): the query right after answers
// none of the hour's points (rows are hourly, and a delete takes the whole
// row, as OpenTSDB's does, flushed or not), nor does the daemon restarted
// after SIGKILL (the head's log replays the delete) or after SIGTERM (the
// shutdown flush writes the head); a point written after the delete at a
// deleted timestamp is kept, and the next hour is untouched.
func TestDaemonQueryDeleteHead(t *testing.T) {
	data := t.TempDir()
	args := []string{"--data", data, "--tsd.http.query.allow_delete=true"}
	d := startDaemon(t, args...)
	pt := func(ts, v int) string {
		return `{"metric":"dh.m","timestamp":` + strconv.Itoa(1356998400+ts) + `,"value":` + strconv.Itoa(v) + `,"tags":{"host":"a"}}`
	}
	putSync(t, d, "["+pt(0, 1)+","+pt(60, 2)+","+pt(120, 3)+","+pt(180, 4)+","+pt(1800, 5)+","+pt(3600, 6)+"]")
	resp, body := post(t, "DELETE", "http://"+d.Addr+"/api/query?start=1356998400&end=1356998520&m=sum:dh.m", nil, false)
	if want := `[{"metric":"dh.m","tags":{"host":"a"},"aggregateTags":[],"dps":{"1356998400":1,"1356998460":2,"1356998520":3}}]`; resp.StatusCode != 200 || body != want {
		t.Fatalf("DELETE = %d %s, want %s", resp.StatusCode, body, want)
	}
	hour := "/api/query?start=1356998400&end=1357002000&m=sum:dh.m"
	expect := func(when, dps string) {
		t.Helper()
		want := `[{"metric":"dh.m","tags":{"host":"a"},"aggregateTags":[],"dps":{` + dps + `}}]`
		if code, body := d.Get(t, hour); code != 200 || body != want {
			t.Fatalf("%s: %d %s\nwant %s", when, code, body, want)
		}
	}
	expect("right after the delete", `"1357002000":6`)
	d.Kill()
	d = startDaemon(t, args...)
	expect("after SIGKILL and replay", `"1357002000":6`)
	putSync(t, d, "["+pt(60, 99)+"]")
	expect("after a new put", `"1356998460":99,"1357002000":6`)
	d.Kill()
	d = startDaemon(t, args...)
	expect("after a second SIGKILL", `"1356998460":99,"1357002000":6`)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = startDaemon(t, args...)
	expect("after SIGTERM (flushed to the store)", `"1356998460":99,"1357002000":6`)
}

// TestDaemonTimezone checks tsd.core.timezone: absolute dates and
// calendar days are Denver's unless the query names a zone.
func TestDaemonTimezone(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.core.timezone=America/Denver")
	var pts []string
	// 2023-11-14 23:00Z to 2023-11-15 01:50Z, every 10 min: two UTC days,
	// one Denver day (MST midnight is 07:00Z).
	for i := range 18 {
		pts = append(pts, `{"metric":"tz.m","timestamp":`+strconv.Itoa(1700002800+600*i)+`,"value":1,"tags":{"host":"a"}}`)
	}
	putSync(t, d, "["+strings.Join(pts, ",")+"]")
	for _, c := range []struct{ q, dps string }{
		{"start=2023/11/14&end=2023/11/15-12:00&m=sum:1dc-count:tz.m", `"1699945200":18.0`},
		{"start=2023/11/14&end=2023/11/15-12:00&timezone=UTC&m=sum:1dc-count:tz.m", `"1699920000":6.0,"1700006400":12.0`},
		// 16:00 in Denver is 23:00Z: the first point.
		{"start=2023/11/14-16:00&end=2023/11/14-16:05&m=sum:tz.m", `"1700002800":1`},
	} {
		want := `[{"metric":"tz.m","tags":{"host":"a"},"aggregateTags":[],"dps":{` + c.dps + `}}]`
		if code, body := d.Get(t, "/api/query?"+c.q); code != 200 || body != want {
			t.Errorf("%s: %d %s\nwant %s", c.q, code, body, want)
		}
	}
	if code, body := d.Get(t, "/api/config"); code != 200 || !strings.Contains(body, `"tsd.core.timezone":"America/Denver"`) {
		t.Errorf("/api/config: %d %s", code, body)
	}
}

// TestDaemonJSONPAndStats checks ?jsonp= on /api/query (a gzipped answer
// included: the client asks for gzip) and on an error, and the shape of
// showStats and showSummary.
func TestDaemonJSONPAndStats(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.http.jsonp.enable=true")
	var pts []string
	for i := range 200 {
		pts = append(pts, `{"metric":"jp.m","timestamp":`+strconv.Itoa(1356998400+i)+`,"value":`+strconv.Itoa(i)+`,"tags":{"host":"a"}}`)
	}
	putSync(t, d, "["+strings.Join(pts, ",")+"]")
	q := "/api/query?start=1356998400&end=1356998600&m=sum:jp.m"
	_, plain := d.Get(t, q)
	if len(plain) < 1400 {
		t.Fatalf("answer of %d bytes is too small to be gzipped", len(plain))
	}
	req, _ := http.NewRequest("GET", "http://"+d.Addr+q+"&jsonp=cb", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if r, err = gzip.NewReader(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := io.ReadAll(r)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != "cb("+plain+")" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("jsonp query: %d %s %.80s...", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	if code, body := d.Get(t, "/api/query?start=1356998400&m=sum:nope.m&jsonp=cb"); code != 400 ||
		!strings.HasPrefix(body, `cb({"error":{"code":400,"message":"No such name for 'metrics': 'nope.m'"`) || !strings.HasSuffix(body, "})") {
		t.Errorf("jsonp error: %d %s", code, body)
	}
	code, body := d.Get(t, "/api/query?start=1356998400&end=1356998600&show_stats&show_summary&m="+url.QueryEscape("sum:jp.m"))
	var out []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil || len(out) != 2 {
		t.Fatalf("stats query: %d %v %.200s", code, err, body)
	}
	var st struct{ EmittedDPs, DpsPostFilter int }
	if json.Unmarshal(out[0]["stats"], &st); st.EmittedDPs != 200 || st.DpsPostFilter != 200 {
		t.Errorf("stats %s", out[0]["stats"])
	}
	var sum map[string]json.RawMessage
	if json.Unmarshal(out[1]["statsSummary"], &sum); sum["queryIdx_00"] == nil || sum["processingPreWriteTime"] == nil || string(sum["emittedDPs"]) != "200" {
		t.Errorf("summary %s", out[1]["statsSummary"])
	}
}
