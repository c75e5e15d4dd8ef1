package api

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/storage/pebble/diskfull"
	"github.com/tsd-db/tsd/uid"
)

// TestPutCommitFailureNamesCause: when the log cannot write (its disk
// full), /api/put answers 503 with Retry-After, and the reply names the
// cause: in the details' error list (it was `"errors":[]`), and in the
// error without flags.
func TestPutCommitFailureNamesCause(t *testing.T) {
	var disk *diskfull.FS
	w, _, _ := newWriterFS(t, 0, uid.Options{}, func(fs vfs.FS) vfs.FS { disk = diskfull.New(fs); return disk })
	_, base := startServer(t, Options{Ingest: w})
	disk.SetBudget(0)
	point := []byte(`{"metric":"disk.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`)
	resp, body := sendReq(t, "POST", base+"/api/put?details", point)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(body, `{"success":0,"failed":1,"errors":[{"error":"Please throttle writes: `) ||
		!strings.Contains(body, "no space left on device") || !strings.Contains(body, "(1 data points not written)") {
		t.Errorf("/api/put?details on a full disk = %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	resp, body = sendReq(t, "POST", base+"/api/put", point)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(body, `{"error":{"code":503,"message":"Please throttle writes","details":"ingest: commit 1 points: wal: write failed: no space left on device`) {
		t.Errorf("/api/put on a full disk = %d %s", resp.StatusCode, body)
	}
	disk.Free()
	if resp, body = sendReq(t, "POST", base+"/api/put", point); resp.StatusCode != 204 {
		t.Errorf("/api/put after space came back = %d %s", resp.StatusCode, body)
	}
}

// TestReadOnlyRefusesWrites: while the gate is closed every write endpoint
// answers 503 with Retry-After naming the reason (telnet: OpenTSDB's
// throttle line), nothing is stored, and reads go on; writes work again
// once it opens.
func TestReadOnlyRefusesWrites(t *testing.T) {
	_, h, u := newWriter(t, 0)
	g := ingest.NewGate(ingest.GateOptions{})
	w, err := service.NewWriter(service.Options{UIDs: u, Head: h, Gate: g, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	s, base := startServer(t, Options{Ingest: w, Telnet: mustTelnet(t, w), Gate: g,
		Annotations: noteStore(t)})
	g.SetMode("disk: 1 MiB free in /data, under min_free_bytes 256 MiB")
	const reason = "read-only: disk: 1 MiB free in /data, under min_free_bytes 256 MiB"
	for _, c := range []struct{ path, body, want string }{
		{"/api/put", `{"metric":"ro.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`,
			`{"error":{"code":503,"message":"Please throttle writes","details":"` + reason + `"}}`},
		{"/api/put?details", `{"metric":"ro.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`,
			`{"success":0,"failed":1,"errors":[{"datapoint":{"metric":"ro.m","timestamp":1356998400,"value":"1","tags":{"host":"a"}},"error":"Please throttle writes: ` + reason + `"}]}`},
		{"/write", "ro_cpu v=1 1356998400000000000\n", "~" + reason},
		{"/api/annotation", `{"startTime":1356998400,"description":"x"}`,
			`{"error":{"code":503,"message":"Read-only","details":"` + reason + `"}}`},
	} {
		resp, body := sendReq(t, "POST", base+c.path, []byte(c.body))
		ok := resp.StatusCode == 503 && resp.Header.Get("Retry-After") != ""
		if want, sub := strings.CutPrefix(c.want, "~"); sub {
			ok = ok && strings.Contains(body, want)
		} else {
			ok = ok && body == c.want
		}
		if !ok {
			t.Errorf("POST %s while read-only = %d %q %s\nwant 503 %s", c.path, resp.StatusCode,
				resp.Header.Get("Retry-After"), body, c.want)
		}
	}
	conn := dialRaw(t, s)
	defer conn.Close()
	conn.Write([]byte("put ro.m 1356998400 1 host=a\nversion\n"))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if want := "put: Please throttle writes: " + reason + "\n"; err != nil || line != want {
		t.Errorf("telnet put while read-only = %q %v, want %q", line, err, want)
	}
	if _, err := u.Lookup(context.Background(), uid.Metric, []byte("ro.m")); err == nil {
		t.Error("a refused point's metric was assigned a UID")
	}
	if st := w.Stats(service.Put); st.ReadOnly.Load() != 2 || st.Points.Load() != 0 {
		t.Errorf("put counters while read-only: read-only %d, points %d", st.ReadOnly.Load(), st.Points.Load())
	}
	if resp, body := sendReq(t, "GET", base+"/api/annotation?start_time=1356998400", nil); resp.StatusCode != 404 {
		t.Errorf("annotation read while read-only = %d %s, want 404 (a read, not refused)", resp.StatusCode, body)
	}
	g.SetMode("")
	resp, body := sendReq(t, "POST", base+"/api/put", []byte(`{"metric":"ro.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`))
	if resp.StatusCode != 204 {
		t.Errorf("/api/put after the gate opened = %d %s", resp.StatusCode, body)
	}
	if n := headPoints(t, h, u, "ro.m", "host", "a"); n != 1 {
		t.Errorf("head holds %d points, want 1", n)
	}
}
