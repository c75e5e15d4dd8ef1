package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run the real tsd binary, built once per test run.
var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "tsd-test-bin"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// tsdBinary builds cmd/tsd (cgo off, as shipped) on first use.
func tsdBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binPath = filepath.Join(binDir, "tsd")
		// -buildvcs=false: a checkout git refuses to read (another owner)
		// must not fail the build; no test reads the revision.
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// logBuffer collects a process's stderr for assertions while it runs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// daemon is a running tsd process.
type daemon struct {
	cmd  *exec.Cmd
	addr string // the bound host:port, from the "listening on" log line
	logs *logBuffer
	done chan error
}

var listeningRE = regexp.MustCompile(`listening on (\S+?)"? `)

// startDaemon runs tsd with args on an ephemeral 127.0.0.1 port and waits
// for it to log its address. The process is stopped when the test ends.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	args = append([]string{"--port=0", "--tsd.network.bind=127.0.0.1"}, args...)
	d := &daemon{cmd: exec.Command(tsdBinary(t), args...), logs: &logBuffer{}, done: make(chan error, 1)}
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.stop(t) })
	found := make(chan string, 1)
	go d.readLogs(stderr, found)
	select {
	case d.addr = <-found:
	case err := <-d.done:
		t.Fatalf("tsd exited before listening: %v\n%s", err, d.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("tsd did not log its address within 60s:\n%s", d.logs)
	}
	return d
}

// readLogs copies stderr into d.logs, reports the listening address, and
// reports the exit once stderr closes.
func (d *daemon) readLogs(stderr io.Reader, found chan<- string) {
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(d.logs, line)
		if m := listeningRE.FindStringSubmatch(line); m != nil {
			found <- m[1]
		}
	}
	d.done <- d.cmd.Wait()
}

// stop sends SIGTERM and returns the exit error; it kills the process if
// it does not stop within 20s.
func (d *daemon) stop(t *testing.T) error { return d.stopWithin(t, 20*time.Second) }

// stopWithin is stop with a longer wait, for daemons whose shutdown flush
// and compaction drain have much to write.
func (d *daemon) stopWithin(t *testing.T, wait time.Duration) error {
	if d.cmd.ProcessState != nil {
		return nil
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err // later callers see it too
		return err
	case <-time.After(wait):
		d.cmd.Process.Kill()
		t.Errorf("tsd did not stop within %v of SIGTERM:\n%s", wait, d.logs)
		return errors.New("killed")
	}
}

func (d *daemon) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + d.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestDaemonServesAndStops(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	code, body := d.get(t, "/api/version")
	var v map[string]string
	if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil {
		t.Fatalf("GET /api/version = %d %s (%v)", code, body, err)
	}
	for _, k := range []string{"version", "short_revision", "full_revision", "timestamp",
		"repo_status", "user", "host", "repo", "branch"} {
		if _, ok := v[k]; !ok {
			t.Errorf("/api/version lacks %q: %s", k, body)
		}
	}
	if v["version"] == "" || v["repo"] != "github.com/tsd-db/tsd" {
		t.Errorf("/api/version = %s", body)
	}
	code, body = d.get(t, "/nope")
	if want := `{"error":{"code":404,"message":"Endpoint not found"}}`; code != 404 || body != want {
		t.Errorf("GET /nope = %d %s, want 404 %s", code, body, want)
	}
	if err := d.stop(t); err != nil {
		t.Fatalf("tsd exited with %v after SIGTERM:\n%s", err, d.logs)
	}
	if !strings.Contains(d.logs.String(), `msg="shutting down"`) {
		t.Errorf("no shutdown line:\n%s", d.logs)
	}
	// The store was closed (its lock released) and its settings recorded:
	// a second start on the same directory works, and one that asks for
	// another salt width is refused naming the key.
	d2 := startDaemon(t, "--data", data)
	if err := d2.stop(t); err != nil {
		t.Fatalf("restart: %v\n%s", err, d2.logs)
	}
	out, code2 := runTSD(t, "--port=0", "--tsd.network.bind=127.0.0.1", "--data", data, "--tsd.storage.salt.width=2")
	if code2 != exitFailed || !strings.Contains(out, "tsd.storage.salt.width") {
		t.Errorf("restart with another salt width: exit %d\n%s", code2, out)
	}
}

func TestDaemonOpenTSDBConf(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "opentsdb.conf")
	err := os.WriteFile(conf, []byte(`# --------- NETWORK ----------
tsd.network.port = 4242
tsd.network.bind = 0.0.0.0
#tsd.network.tcpnodelay = true
tsd.network.keep_alive = true
# ----------- HTTP -----------
tsd.http.staticroot = /usr/share/opentsdb/static/
tsd.http.cachedir = /tmp/opentsdb
# --------- CORE ----------
tsd.core.auto_create_metrics = true
tsd.core.plugin_path = /usr/share/opentsdb/plugins
# --------- STORAGE ----------
tsd.storage.flush_interval = 1000
tsd.storage.hbase.data_table = tsdb
tsd.storage.hbase.uid_table = tsdb-uid
tsd.storage.hbase.zk_quorum = localhost
tsd.storage.hbase.zk_basedir = /hbase
tsd.storage.enable_compaction = false
hbase.rpc.timeout = 60000
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	// Flags come after the file, so --port=0 and the bind win over it.
	d := startDaemon(t, "--config", conf, "--data", t.TempDir())
	for _, key := range []string{"tsd.network.keep_alive", "tsd.http.staticroot", "tsd.storage.hbase.zk_quorum",
		"hbase.rpc.timeout", "tsd.storage.enable_compaction"} {
		if !regexp.MustCompile(`level=WARN .* key=` + regexp.QuoteMeta(key) + ` at=\S+opentsdb.conf:\d+`).
			MatchString(d.logs.String()) {
			t.Errorf("no warning naming %s:\n%s", key, d.logs)
		}
	}
	if code, _ := d.get(t, "/api/version"); code != 200 {
		t.Errorf("GET /api/version = %d", code)
	}
}

// runTSD runs tsd to completion and returns its stdout+stderr and exit code.
func runTSD(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(tsdBinary(t), args...)
	cmd.Dir = t.TempDir() // a stray default ./data lands here
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestDaemonConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(bad, []byte("tsd.network.port = 4242\ntsd.storage.salt.width = wide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tsd.storage.hbase.zookeeper=x"}, `tsd: flag --tsd.storage.hbase.zookeeper: unknown config key "tsd.storage.hbase.zookeeper"`},
		{[]string{"--port", "http"}, `tsd: flag --port: tsd.network.port = "http": want an integer`},
		{[]string{"--config", bad}, `bad.conf:2: tsd.storage.salt.width = "wide": want an integer`},
		{[]string{"--config", bad + ".missing"}, "tsd: read config: open "},
		{[]string{"start"}, `tsd: unknown command "start"`},
	} {
		out, code := runTSD(t, tc.args...)
		if code != exitUsage || !strings.Contains(out, tc.want) {
			t.Errorf("tsd %q: exit %d, output:\n%s\nwant exit %d and %q", tc.args, code, out, exitUsage, tc.want)
		}
	}
}

func TestDaemonHelp(t *testing.T) {
	out, code := runTSD(t, "--help")
	if code != exitOK {
		t.Fatalf("tsd --help: exit %d\n%s", code, out)
	}
	for _, k := range newConfig().keys {
		if !strings.Contains(out, "  "+k.name+" (") || !strings.Contains(out, `[default "`+k.def+`"]`) {
			t.Errorf("tsd --help lacks %s [default %q]", k.name, k.def)
		}
	}
	if out, code := runTSD(t, "uid", "--help"); code != exitOK || !strings.HasPrefix(out, "Usage: tsd uid") {
		t.Errorf("tsd uid --help: exit %d\n%s", code, out)
	}
	for _, want := range []string{"tsd.network.port (int, alias --port)", `[default "4242"]`,
		"tsd.storage.directory (string, alias --data)", `[default "./data"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("tsd --help lacks %q", want)
		}
	}
}
