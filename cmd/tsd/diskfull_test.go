package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/tsd-db/tsd/internal/daemontest"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/storage/pebble/diskfull"
)

// The disk-full tests run the daemon in this process, wired by serve as
// main wires it, on a simulated disk (storage/pebble/diskfull over a
// vfs.MemFS) whose free space and room the test sets: a real disk cannot
// be filled safely on a shared machine. config.fs, which no key sets, is
// how the disk gets in.

// memDaemon is serve running in this process.
type memDaemon struct {
	Addr   string
	Logs   *daemontest.Logs
	cancel context.CancelFunc
	done   chan error
}

// diskArgs are the settings of the disk tests: a 64 MiB minimum, checked
// every 20 ms.
var diskArgs = []string{"--tsd.storage.min_free_bytes=64MiB", "--tsd.storage.free_check_interval=20ms"}

// startMem runs serve on disk with args (--data /data on it) and waits for
// its "listening on" line; it fails the test if serve returns or does not
// listen within 30 s (a daemon hung before listening).
func startMem(t *testing.T, disk vfs.FS, args ...string) *memDaemon {
	t.Helper()
	c := newConfig()
	cl, err := parseArgs(append([]string{"--port=0", "--tsd.network.bind=127.0.0.1", "--data=/data"}, args...), c.isBoolFlag)
	if err != nil {
		t.Fatal(err)
	}
	d := &memDaemon{Logs: &daemontest.Logs{}, done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(d.Logs, nil))
	if err := c.load(cl, log); err != nil {
		t.Fatal(err)
	}
	c.fs = disk
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() { d.done <- serve(ctx, c, log) }()
	t.Cleanup(func() { d.Stop(t) })
	deadline := time.Now().Add(30 * time.Second)
	for d.Addr == "" {
		if addr, ok := daemontest.ListenAddr(d.Logs.String()); ok {
			d.Addr = addr
			break
		}
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("serve returned before listening: %v\n%s", err, d.Logs)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not listen within 30s:\n%s", d.Logs)
		}
	}
	return d
}

// stop shuts the daemon down as SIGTERM does and returns serve's error.
func (d *memDaemon) Stop(t *testing.T) error {
	d.cancel()
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("the daemon did not stop within 30s:\n%s", d.Logs)
		return nil
	}
}

func (d *memDaemon) base() string { return "http://" + d.Addr }

// putPoint sends one /api/put point and returns the status, the
// Retry-After header and the body.
func (d *memDaemon) putPoint(t *testing.T, query, metric string, ts int64, v int) (int, string, string) {
	t.Helper()
	body := fmt.Sprintf(`{"metric":%q,"timestamp":%d,"value":%d,"tags":{"host":"a"}}`, metric, ts, v)
	resp, out := post(t, "POST", d.base()+"/api/put"+query, []byte(body), false)
	return resp.StatusCode, resp.Header.Get("Retry-After"), out
}

// points returns metric{host=a}'s points in [diskT0, diskT0+1h) as
// timestamp -> value.
func (d *memDaemon) points(t *testing.T, metric string) map[int64]float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/api/query?start=%d&end=%d&m=sum:%s{host=a}", d.base(), diskT0, diskT0+3599, metric))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res []struct {
		DPS map[string]float64 `json:"dps"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 {
		t.Fatalf("query %s: %d %v", metric, resp.StatusCode, err)
	}
	out := map[int64]float64{}
	for _, r := range res {
		for k, v := range r.DPS {
			ts, _ := strconv.ParseInt(k, 10, 64)
			out[ts] = v
		}
	}
	return out
}

// metric returns the value of a /metrics line that starts with prefix.
func (d *memDaemon) metric(t *testing.T, prefix string) float64 {
	t.Helper()
	resp, err := http.Get(d.base() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			v, _ := strconv.ParseFloat(strings.TrimPrefix(line, prefix+" "), 64)
			return v
		}
	}
	t.Fatalf("no %s in /metrics:\n%s", prefix, b.String())
	return 0
}

const diskT0 = 1356998400

// putAcked writes n points of metric at diskT0+i, each acknowledged
// (synced with sync set), and returns them.
func putAcked(t *testing.T, d *memDaemon, metric string, n int, sync bool) map[int64]float64 {
	t.Helper()
	q := ""
	if sync {
		q = "?sync"
	}
	want := map[int64]float64{}
	for i := range n {
		if code, _, body := d.putPoint(t, q, metric, diskT0+int64(i), i); code != 204 {
			t.Fatalf("put %s %d = %d %s", metric, i, code, body)
		}
		want[diskT0+int64(i)] = float64(i)
	}
	return want
}

func samePoints(t *testing.T, what string, got, want map[int64]float64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: %d points %v\nwant %d %v", what, len(got), got, len(want), want)
	}
}

// waitFor polls cond every 10 ms for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 20s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// telnetLine sends one line and a version barrier and returns the first
// line answered.
func telnetLine(t *testing.T, d *memDaemon, line string) string {
	t.Helper()
	return telnetSession(t, d.Addr, line)[0]
}

// TestDiskFullDaemonNoPanic: another process fills the disk behind the
// free-space check's back, so the store meets ENOSPC itself, in UID
// assignment for a new metric (where e8782e9 panicked: "pebble: fatal
// commit error ... no space left on device"). The daemon must answer 503
// with Retry-After naming the full disk (telnet: the throttle line), go
// read-only, serve every acknowledged point, take writes again by itself
// once space is back, and keep everything acknowledged across a restart.
func TestDiskFullDaemonNoPanic(t *testing.T) {
	disk := diskfull.New(vfs.NewMem())
	d := startMem(t, disk, diskArgs...)
	acked := putAcked(t, d, "disk.acked", 20, false)
	disk.SetBudget(0)
	code, retry, body := d.putPoint(t, "", "disk.new", diskT0, 1)
	if code != 503 || retry == "" || !strings.Contains(body, "no space left on device") {
		t.Fatalf("put of a new metric on a full disk = %d (Retry-After %q) %s", code, retry, body)
	}
	if line := telnetLine(t, d, fmt.Sprintf("put disk.new2 %d 1 host=a", diskT0)); !strings.HasPrefix(line,
		"put: Please throttle writes: read-only: disk full: ") || !strings.Contains(line, "no space left on device") {
		t.Errorf("telnet put on a full disk answered %q", line)
	}
	samePoints(t, "acknowledged points on a full disk", d.points(t, "disk.acked"), acked)
	if v := d.metric(t, "tsd_storage_read_only"); v != 1 {
		t.Errorf("tsd_storage_read_only = %v on a full disk", v)
	}
	if v := d.metric(t, "tsd_storage_disk_full_total"); v < 1 {
		t.Errorf("tsd_storage_disk_full_total = %v", v)
	}
	if v := d.metric(t, `tsd_ingest_read_only_total{protocol="telnet"}`); v != 1 {
		t.Errorf(`tsd_ingest_read_only_total{protocol="telnet"} = %v, want 1`, v)
	}

	disk.Free()
	waitFor(t, "writes resume after space came back", func() bool {
		code, _, _ := d.putPoint(t, "", "disk.new", diskT0, 1)
		return code == 204
	})
	if v := d.metric(t, "tsd_storage_read_only"); v != 0 {
		t.Errorf("tsd_storage_read_only = %v after space came back", v)
	}
	acked2 := putAcked(t, d, "disk.acked", 30, false)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = startMem(t, disk, diskArgs...)
	samePoints(t, "acknowledged points after a restart", d.points(t, "disk.acked"), acked2)
	samePoints(t, "the point written after space came back", d.points(t, "disk.new"), map[int64]float64{diskT0: 1})
	if strings.Contains(d.Logs.String(), "panic") {
		t.Errorf("log mentions a panic:\n%s", d.Logs)
	}
}

var refusingRE = regexp.MustCompile(`level=WARN msg="store refusing writes"`)

// TestDiskLowDaemon: with free space under tsd.storage.min_free_bytes the
// daemon refuses writes before the disk is full (nothing reaches ENOSPC):
// 503 with Retry-After naming the figures, telnet's throttle line; reads
// go on; it warns once a minute, not once a check; /metrics shows the
// free bytes, the read-only state and the refusals; once space is back it
// takes writes again by itself.
func TestDiskLowDaemon(t *testing.T) {
	disk := diskfull.New(vfs.NewMem())
	d := startMem(t, disk, diskArgs...)
	acked := putAcked(t, d, "low.acked", 10, false)
	disk.SetAvail(32 << 20)
	waitFor(t, "writes refused", func() bool {
		code, _, _ := d.putPoint(t, "", "low.acked", diskT0+100, 100)
		if code == 204 { // before the check saw the disk low: acknowledged
			acked[diskT0+100] = 100
		}
		return code == 503
	})
	const reason = "read-only: disk: 32 MiB free in /data, under min_free_bytes 64 MiB"
	code, retry, body := d.putPoint(t, "", "low.new", diskT0, 1)
	if want := `{"error":{"code":503,"message":"Please throttle writes","details":"` + reason + `"}}`; code != 503 || retry == "" || body != want {
		t.Errorf("put with the disk low = %d (Retry-After %q) %s\nwant 503 %s", code, retry, body, want)
	}
	code, _, body = d.putPoint(t, "?details", "low.new", diskT0, 1)
	if code != 503 || !strings.Contains(body, `"error":"Please throttle writes: `+reason+`"`) {
		t.Errorf("put?details with the disk low = %d %s", code, body)
	}
	if line := telnetLine(t, d, fmt.Sprintf("put low.acked %d 1 host=a", diskT0+200)); line != "put: Please throttle writes: "+reason {
		t.Errorf("telnet put with the disk low answered %q", line)
	}
	resp, body := post(t, "POST", d.base()+"/write", []byte("low_cpu v=1 1356998400000000000\n"), false)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Please throttle writes: "+reason) {
		t.Errorf("Influx /write with the disk low = %d %s", resp.StatusCode, body)
	}
	samePoints(t, "acknowledged points with the disk low", d.points(t, "low.acked"), acked)
	if v := d.metric(t, "tsd_storage_disk_free_bytes"); v != 32<<20 {
		t.Errorf("tsd_storage_disk_free_bytes = %v", v)
	}
	if v := d.metric(t, "tsd_storage_read_only"); v != 1 {
		t.Errorf("tsd_storage_read_only = %v", v)
	}
	if v := d.metric(t, `tsd_ingest_read_only_total{protocol="put"}`); v < 3 {
		t.Errorf(`tsd_ingest_read_only_total{protocol="put"} = %v, want at least 3`, v)
	}
	time.Sleep(300 * time.Millisecond) // fifteen checks
	if n := len(refusingRE.FindAllString(d.Logs.String(), -1)); n != 1 {
		t.Errorf("%d refusal warnings, want 1 a minute:\n%s", n, d.Logs)
	}

	disk.SetAvail(diskfull.Roomy)
	waitFor(t, "writes resume", func() bool {
		code, _, _ := d.putPoint(t, "", "low.new", diskT0, 1)
		return code == 204
	})
	if line := telnetLine(t, d, fmt.Sprintf("put low.acked %d 1 host=a", diskT0+200)); !strings.HasPrefix(line, "tsd ") {
		t.Errorf("telnet put after space came back answered %q", line)
	}
	if n := disk.Refused(); n != 0 {
		t.Errorf("the disk refused %d writes: a write reached a full disk", n)
	}
}

// TestDiskFullDaemonStart: a daemon whose disk is full when it starts,
// after a crash, with acknowledged points in its write-ahead log and in
// pebble's (e8782e9 hung before listening, in pebble's open). It must
// listen, serve every acknowledged point, refuse writes naming the disk,
// take writes by itself once space is back, and keep everything across a
// restart.
func TestDiskFullDaemonStart(t *testing.T) {
	mem := vfs.NewCrashableMem()
	d := startMem(t, diskfull.New(mem), diskArgs...)
	acked := putAcked(t, d, "start.acked", 20, true)
	// Power lost: only what was synced survives. The UIDs and series are
	// in pebble's log, the points in tsd's.
	crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	if err := d.Stop(t); err != nil {
		t.Fatal(err)
	}

	disk := diskfull.New(crashed)
	disk.Fill(1 << 20)
	d = startMem(t, disk, diskArgs...)
	samePoints(t, "acknowledged points, started on a full disk", d.points(t, "start.acked"), acked)
	code, retry, body := d.putPoint(t, "", "start.acked", diskT0+100, 100)
	if code != 503 || retry == "" || !strings.Contains(body, "read-only: disk: 1 MiB free in /data, under min_free_bytes 64 MiB") {
		t.Errorf("put on a full disk = %d (Retry-After %q) %s", code, retry, body)
	}
	if line := telnetLine(t, d, fmt.Sprintf("put start.new %d 1 host=a", diskT0)); !strings.HasPrefix(line, "put: Please throttle writes: read-only: disk: 1 MiB free") {
		t.Errorf("telnet put on a full disk answered %q", line)
	}
	if code, body := getStatus(t, d.base()+"/api/suggest?type=metrics&q=start"); code != 200 || body != `["start.acked"]` {
		t.Errorf("suggest on a full disk = %d %s", code, body)
	}

	disk.Free()
	waitFor(t, "writes resume", func() bool {
		code, _, _ := d.putPoint(t, "", "start.new", diskT0, 1)
		return code == 204
	})
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = startMem(t, disk, diskArgs...)
	samePoints(t, "acknowledged points after a restart", d.points(t, "start.acked"), acked)
	samePoints(t, "the point written once space was back", d.points(t, "start.new"), map[int64]float64{diskT0: 1})
}

// TestDiskFullDaemonStop: a daemon read-only at SIGTERM skips the final
// flush (the disk cannot take it) and exits cleanly; its acknowledged
// points wait in the log and are all there at the next start.
func TestDiskFullDaemonStop(t *testing.T) {
	disk := diskfull.New(vfs.NewMem())
	d := startMem(t, disk, diskArgs...)
	acked := putAcked(t, d, "stop.acked", 20, false)
	disk.SetAvail(1 << 20)
	waitFor(t, "read-only", func() bool { return d.metric(t, "tsd_storage_read_only") == 1 })
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop while read-only: %v\n%s", err, d.Logs)
	}
	if !strings.Contains(d.Logs.String(), "read-only at shutdown") {
		t.Errorf("no line saying the points wait in the log:\n%s", d.Logs)
	}
	disk.Free()
	d = startMem(t, disk, diskArgs...)
	samePoints(t, "acknowledged points after a read-only stop", d.points(t, "stop.acked"), acked)
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}
