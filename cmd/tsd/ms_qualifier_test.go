package main

import (
	"strings"
	"testing"
)

// TestDaemonMsQualifierOnWholeSecond: in opentsdb format, a point whose
// client gave milliseconds is written with a 4-byte millisecond qualifier
// even on a whole second, as OpenTSDB does (it decides by the timestamp's
// upper 32 bits: Internal.buildQualifier, IncomingDataPoints.addPoint),
// over telnet and /api/put, through the write-ahead log (the daemon is
// killed before any flush and replays it) and the flush; seconds keep the
// 2-byte form, and so do Influx points on whole seconds (a deliberate
// difference). Both forms read back.
func TestDaemonMsQualifierOnWholeSecond(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data, "--tsd.storage.format=opentsdb")
	// 4294967295 s, the last second a row key holds, is 1695 s into the
	// row at 4294965600.
	got := telnetSession(t, d.Addr,
		"put ms.q 4294967295000 1 host=a", // ms, whole second: F6774600
		"put ms.q 4294967291 2 host=a",    // seconds: 69B0
		"put ms.q 4294967292500 3 host=b") // ms off the second: F674D500
	if len(got) != 2 {
		t.Fatalf("telnet replies %q", got)
	}
	put := `{"metric":"ms.q","timestamp":4294967293000,"value":4,"tags":{"host":"c"}}`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, "POST", "http://"+d.Addr+"/write?db=x&precision=ms", []byte("ms,host=d q=5i 4294967294000\n"), false); resp.StatusCode != 204 {
		t.Fatalf("/write = %d %s", resp.StatusCode, body)
	}
	d.Kill() // the points are only in the log
	d = startDaemon(t, "--data", data, "--tsd.storage.format=opentsdb")
	for _, c := range []struct{ path, want string }{
		{"/api/query?start=4294967290&end=4294967295&ms&m=sum:ms.q{host=*}",
			`{"4294967291000":2,"4294967295000":1}`},
		{"/api/query?start=4294967290&end=4294967295&ms&m=sum:ms.q{host=c}", `{"4294967293000":4}`},
	} {
		if code, body := d.Get(t, c.path); code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("GET %s = %d %s, want %s", c.path, code, body, c.want)
		}
	}
	if err := d.Stop(t); err != nil { // flushes every row
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	code, out, errs := tsdScan(t, data, "4294967290", "4294967295", "ms.q")
	if code != exitOK {
		t.Fatalf("tsd scan: %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		"cell q=69B0F6774600 v=020101 ", // host=a: seconds then ms on a whole second, a mixed compacted column
		"cell q=F674D500 v=03 ",         // host=b
		"cell q=F6755200 v=04 ",         // host=c, /api/put in ms on a whole second
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tsd scan lacks %q:\n%s", want, out)
		}
	}
	// Both forms read back, the store's now.
	d = startDaemon(t, "--data", data, "--tsd.storage.format=opentsdb")
	code, body := d.Get(t, "/api/query?start=4294967290&end=4294967295&ms&m=sum:ms.q{host=*}")
	for _, want := range []string{`{"4294967291000":2,"4294967295000":1}`, `{"4294967292500":3}`, `{"4294967293000":4}`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("query after the flush = %d %s, want %s", code, body, want)
		}
	}
}
