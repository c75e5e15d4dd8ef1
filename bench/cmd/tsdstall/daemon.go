package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// daemon is a tsd process this command started.
type daemon struct {
	cmd  *exec.Cmd
	addr string // host:port from its "listening on" line
	logs *tail
	done chan error // the exit, once stderr closes
}

var listeningRE = regexp.MustCompile(`listening on (\S+?)"? `)

// buildTSD builds cmd/tsd (cgo off, as shipped) into dir.
func buildTSD(dir string) (string, error) {
	bin := dir + "/tsd"
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "github.com/tsd-db/tsd/cmd/tsd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tsd: %v\n%s", err, out)
	}
	return bin, nil
}

// startDaemon runs bin on an ephemeral port of 127.0.0.1 with its data in
// dir and waits for its address.
func startDaemon(ctx context.Context, bin, dir string, extra []string) (*daemon, error) {
	args := append([]string{"--port=0", "--tsd.network.bind=127.0.0.1", "--data", dir}, extra...)
	d := &daemon{cmd: exec.Command(bin, args...), logs: &tail{}, done: make(chan error, 1)}
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go d.readLogs(stderr, found)
	select {
	case d.addr = <-found:
		return d, nil
	case err := <-d.done:
		return nil, fmt.Errorf("tsd exited before listening: %v\n%s", err, d.logs)
	case <-time.After(time.Minute):
	case <-ctx.Done():
	}
	d.cmd.Process.Kill()
	<-d.done
	return nil, fmt.Errorf("tsd did not log its address:\n%s", d.logs)
}

// readLogs keeps the end of stderr, reports the address and then the exit.
func (d *daemon) readLogs(stderr io.Reader, found chan<- string) {
	sc := bufio.NewScanner(stderr)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		d.logs.add(line)
		if m := listeningRE.FindStringSubmatch(line); m != nil && !sent {
			found <- m[1]
			sent = true
		}
	}
	d.done <- d.cmd.Wait()
}

// pid is the process id, for /proc readings.
func (d *daemon) pid() int { return d.cmd.Process.Pid }

// stop sends SIGTERM and waits for the exit (the shutdown flushes the
// head to the store), killing the process after a minute.
func (d *daemon) stop() error {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		return err
	case <-time.After(time.Minute):
		d.cmd.Process.Kill()
		<-d.done
		return errors.New("tsd did not stop within a minute of SIGTERM; killed")
	}
}

// tail keeps the last lines of a log, and counts lines by substring.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 40

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == tailLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
