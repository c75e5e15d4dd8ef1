package main

import (
	"encoding/json"
	"errors"
	"flag"
	"github.com/tsd-db/tsd/internal/daemontest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// These tests run the real tsd binary (internal/daemontest.Binary, shared
// with the other packages' tests). Their parallel tests mostly wait on
// their daemons: four run at once.
func TestMain(m *testing.M) {
	parallelUnlessSet(4)
	os.Exit(m.Run())
}

// parallelUnlessSet lets n parallel tests run at once unless
// -test.parallel was given: the default, GOMAXPROCS, leaves the cores idle
// while two tests wait.
func parallelUnlessSet(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// daemon is a running tsd process; this package's tests add methods.
type daemon struct{ *daemontest.Daemon }

// startDaemon runs tsd with args on an ephemeral 127.0.0.1 port and waits
// for it to log its address. The process is stopped when the test ends.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	return &daemon{daemontest.Start(t, args...)}
}

// tsdBinary is the built daemon, for tests that run it themselves.
func tsdBinary(t *testing.T) string { return daemontest.Binary(t) }

func TestDaemonServesAndStops(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	code, body := d.Get(t, "/api/version")
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
	code, body = d.Get(t, "/nope")
	if want := `{"error":{"code":404,"message":"Endpoint not found"}}`; code != 404 || body != want {
		t.Errorf("GET /nope = %d %s, want 404 %s", code, body, want)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("tsd exited with %v after SIGTERM:\n%s", err, d.Logs)
	}
	if !strings.Contains(d.Logs.String(), `msg="shutting down"`) {
		t.Errorf("no shutdown line:\n%s", d.Logs)
	}
	// The store was closed (its lock released) and its settings recorded:
	// a second start on the same directory works, and one that asks for
	// another salt width is refused naming the key.
	d2 := startDaemon(t, "--data", data)
	if err := d2.Stop(t); err != nil {
		t.Fatalf("restart: %v\n%s", err, d2.Logs)
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
			MatchString(d.Logs.String()) {
			t.Errorf("no warning naming %s:\n%s", key, d.Logs)
		}
	}
	if code, _ := d.Get(t, "/api/version"); code != 200 {
		t.Errorf("GET /api/version = %d", code)
	}
}

// runTSD runs tsd to completion and returns its stdout+stderr and exit code.
func runTSD(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runTSDEnv(t, nil, args...)
}

// runTSDEnv is runTSD with env as the command's environment (nil: the
// test's).
func runTSDEnv(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(tsdBinary(t), args...)
	cmd.Env = env
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
		if !strings.Contains(out, "  "+k.name+" (") || !strings.Contains(out, "[default "+strconv.Quote(k.def)+"]") {
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
