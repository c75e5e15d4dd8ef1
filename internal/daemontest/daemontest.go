package daemontest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartTimeout bounds how long Start waits for the daemon to log its
// address; StopTimeout how long Stop waits after SIGTERM.
const (
	StartTimeout = 60 * time.Second
	StopTimeout  = 20 * time.Second
)

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the tsd binary, building it on first use.
//
// Every test process of one checkout builds to the same path, under the
// system's temporary directory and named by the module's directory: go
// build relinks only when the binary there is not what the sources make
// (its build ID), so the test binaries that start daemons (cmd/tsd,
// api/ui, grafana, bench's) link tsd once between them instead of once
// each, some 15 s of CPU a link. A link replaces the file by a rename,
// so a daemon still running the old one is unharmed. The file stays for
// the next run, as the build cache does.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		var dir string
		if dir, build.err = binaryDir(); build.err != nil {
			return
		}
		build.path = filepath.Join(dir, "tsd")
		// -buildvcs=false: a checkout git refuses to read (another owner)
		// must not fail the build; no test reads the revision.
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", build.path, "github.com/tsd-db/tsd/cmd/tsd")
		cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// binaryDir is the checkout's directory for Binary: named by a hash of
// the module's root, so two checkouts never share a binary.
func binaryDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	sum := sha256.Sum256(bytes.TrimSpace(out))
	dir := filepath.Join(os.TempDir(), "tsd-test-bin-"+hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// Logs collects a process's stderr while it runs.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var listeningRE = regexp.MustCompile(`listening on ([^\s"]+)`)

// ListenAddr returns the address of the first "listening on" line in
// log, if there is one.
func ListenAddr(log string) (string, bool) {
	if m := listeningRE.FindStringSubmatch(log); m != nil {
		return m[1], true
	}
	return "", false
}

// Daemon is a running tsd process.
type Daemon struct {
	Cmd  *exec.Cmd
	Addr string // the bound host:port, from the "listening on" log line
	Logs *Logs

	exited chan struct{} // closed when the process has ended
	err    error         // its exit error, once exited is closed
}

// Start runs tsd with args after --port=0 and --tsd.network.bind=127.0.0.1
// (so args may override them).
func Start(t testing.TB, args ...string) *Daemon {
	t.Helper()
	return StartEnv(t, nil, args...)
}

// StartEnv is Start with env as the daemon's whole environment (nil: the
// test's, as Start). Unlike t.Setenv it leaves the test process's
// environment alone, so tests that give their daemons different values
// (each its own Bigtable emulator) may run in parallel.
func StartEnv(t testing.TB, env []string, args ...string) *Daemon {
	t.Helper()
	args = append([]string{"--port=0", "--tsd.network.bind=127.0.0.1"}, args...)
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = env
	return StartCommand(t, cmd)
}

// StartCommand starts cmd, a tsd daemon possibly run through a wrapper
// (a shell setting a ulimit), and waits for it to log its address. The
// process is stopped when the test ends.
func StartCommand(t testing.TB, cmd *exec.Cmd) *Daemon {
	t.Helper()
	d := &Daemon{Cmd: cmd, Logs: &Logs{}, exited: make(chan struct{})}
	stderr, err := d.Cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop(t) })
	found := make(chan string, 1)
	go d.readLogs(stderr, found)
	select {
	case d.Addr = <-found:
	case <-d.exited:
		t.Fatalf("tsd exited before listening: %v\n%s", d.err, d.Logs)
	case <-time.After(StartTimeout):
		t.Fatalf("tsd did not log its address within %v:\n%s", StartTimeout, d.Logs)
	}
	return d
}

// readLogs copies stderr into d.Logs, reports the listening address, and
// records the exit once stderr closes.
func (d *Daemon) readLogs(stderr io.Reader, found chan<- string) {
	sc := bufio.NewScanner(stderr)
	reported := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(d.Logs, line)
		if addr, ok := ListenAddr(line); ok && !reported {
			found <- addr
			reported = true
		}
	}
	d.err = d.Cmd.Wait()
	close(d.exited)
}

// Wait waits at most timeout for the process to end and returns its exit
// error; exited is false if it is still running.
func (d *Daemon) Wait(timeout time.Duration) (err error, exited bool) {
	select {
	case <-d.exited:
		return d.err, true
	case <-time.After(timeout):
		return nil, false
	}
}

// Stop sends SIGTERM and returns the exit error (nil if the process had
// already ended); it kills the process and fails the test if it does not
// stop within StopTimeout.
func (d *Daemon) Stop(t testing.TB) error { return d.StopWithin(t, StopTimeout) }

// StopWithin is Stop with another wait, for daemons whose shutdown flush
// and compaction drain have much to write.
func (d *Daemon) StopWithin(t testing.TB, wait time.Duration) error {
	select {
	case <-d.exited:
		return nil
	default:
	}
	d.Cmd.Process.Signal(syscall.SIGTERM)
	if err, ok := d.Wait(wait); ok {
		return err
	}
	d.Kill()
	t.Errorf("tsd did not stop within %v of SIGTERM:\n%s", wait, d.Logs)
	return errors.New("killed")
}

// Kill sends SIGKILL and waits for the process to end.
func (d *Daemon) Kill() {
	d.Cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
}

// Get fetches path over HTTP and returns the status and body.
func (d *Daemon) Get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + d.Addr + path)
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
