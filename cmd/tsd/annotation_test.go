package main

import (
	"strings"
	"testing"
)

// TestDaemonAnnotations writes a series note and a global note through the
// real binary, reads them back, and reads them again after a restart on
// the same data directory.
func TestDaemonAnnotations(t *testing.T) {
	t.Parallel() // its own daemon
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	base := "http://" + d.Addr
	resp, body := post(t, "POST", base+"/api/put",
		[]byte(`{"metric":"sys.cpu.user","timestamp":1356998400,"value":42,"tags":{"host":"web01"}}`), false)
	if resp.StatusCode != 204 {
		t.Fatalf("put = %d %s", resp.StatusCode, body)
	}
	series := `{"tsuid":"000001000001000001","description":"deploy","notes":"v2","custom":{"by":"ops"},` +
		`"startTime":1356998523,"endTime":0}`
	global := `{"tsuid":"","description":"outage","notes":"","startTime":1356998400,"endTime":1356999000}`
	for _, c := range []struct{ body, want string }{
		{`{"tsuid":"000001000001000001","startTime":1356998523,"description":"deploy","notes":"v2","custom":{"by":"ops"}}`, series},
		{`{"startTime":1356998400,"endTime":1356999000,"description":"outage"}`, global},
	} {
		resp, body := post(t, "POST", base+"/api/annotation", []byte(c.body), false)
		if resp.StatusCode != 200 || body != c.want {
			t.Fatalf("POST %s = %d %s, want %s", c.body, resp.StatusCode, body, c.want)
		}
	}
	check := func(d *daemon) {
		t.Helper()
		if code, body := d.Get(t, "/api/annotation?tsuid=000001000001000001&start_time=1356998523"); code != 200 || body != series {
			t.Errorf("GET series note = %d %s", code, body)
		}
		if code, body := d.Get(t, "/api/annotation?start_time=1356998400"); code != 200 || body != global {
			t.Errorf("GET global note = %d %s", code, body)
		}
		if code, body := d.Get(t, "/api/annotation?start_time=1356998401"); code != 404 || !strings.Contains(body, "Unable to locate annotation in storage") {
			t.Errorf("GET missing note = %d %s", code, body)
		}
	}
	check(d)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	check(startDaemon(t, "--data", data))
}
