package grafana

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run the real tsd binary, built once per test run (the
// harness of cmd/tsd's main_test.go).
var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "tsd-grafana-bin"); err != nil {
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
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", binPath, "github.com/tsd-db/tsd/cmd/tsd")
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

// logBuffer collects a process's stderr while it runs.
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

// startDaemon runs tsd on an ephemeral 127.0.0.1 port over a fresh data
// directory and waits for it to log its address. The process is stopped
// when the test ends.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	args = append([]string{"--port=0", "--tsd.network.bind=127.0.0.1", "--data", t.TempDir()}, args...)
	d := &daemon{cmd: exec.Command(tsdBinary(t), args...), logs: &logBuffer{}, done: make(chan error, 1)}
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.stop(); err != nil {
			t.Errorf("tsd: %v\n%s", err, d.logs)
		}
	})
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
func (d *daemon) stop() error {
	if d.cmd.ProcessState != nil {
		return nil
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		return errors.New("did not stop within 20s of SIGTERM; killed")
	}
}
