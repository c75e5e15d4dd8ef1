package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// daemon is a server process under measurement.
type daemon struct {
	name     string
	cmd      *exec.Cmd
	logs     bytes.Buffer
	http     string // host:port of its HTTP API
	telnet   string // host:port of its telnet listener
	dataDir  string
	sizeSkip string // a subdirectory of dataDir left out of its size
	stopped  bool
}

// freePort returns a 127.0.0.1 port free at the time of the call.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func startVM(ctx context.Context, bin, dir string) (*daemon, error) {
	h, err := freePort()
	if err != nil {
		return nil, err
	}
	t, err := freePort()
	if err != nil {
		return nil, err
	}
	d := &daemon{name: "VictoriaMetrics", http: h, telnet: t, dataDir: dir, sizeSkip: "cache"}
	d.cmd = exec.CommandContext(ctx, bin, "-storageDataPath="+dir, "-retentionPeriod=100y",
		"-httpListenAddr="+h, "-opentsdbListenAddr="+t, "-loggerLevel=ERROR")
	return d, d.start("/health")
}

func startTSD(ctx context.Context, bin, dir string, rollups bool) (*daemon, error) {
	a, err := freePort()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(a)
	d := &daemon{name: "tsd", http: a, telnet: a, dataDir: dir}
	d.cmd = exec.CommandContext(ctx, bin, "--data", dir, "--tsd.network.bind=127.0.0.1", "--port="+port,
		"--tsd.rollups.enable="+strconv.FormatBool(rollups))
	return d, d.start("/api/version")
}

// start runs the process, read from disk (coldBinary), and waits until
// ready answers 200.
func (d *daemon) start(ready string) error {
	d.cmd.Stdout, d.cmd.Stderr = &d.logs, &d.logs
	if err := coldBinary(d.cmd.Path); err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	if err := d.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + d.http + ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.stop()
	return fmt.Errorf("%s did not answer %s within 2 minutes:\n%s", d.name, ready, d.logs.String())
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// stop ends the process with SIGTERM, SIGKILL after a minute; once.
func (d *daemon) stop() {
	if d.stopped {
		return
	}
	d.stopped = true
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		<-done
	}
}

// post sends an empty POST to path and fails unless the answer is 2xx.
func (d *daemon) post(path string) error {
	resp, err := http.Post("http://"+d.http+path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s POST %s: %s", d.name, path, resp.Status)
	}
	return nil
}

// get sends a GET to path and fails unless the answer is 2xx.
func (d *daemon) get(path string) error {
	resp, err := http.Get("http://" + d.http + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s GET %s: %s", d.name, path, resp.Status)
	}
	return nil
}

// settle brings the store to the size it settles at: tsd's /api/compact;
// VictoriaMetrics' force_flush, then, once nothing is pending or in
// memory, force_merge, then until no merge runs. force_flush alone can
// leave parts in memory that reach the disk seconds later, after a
// size looked settled: one run read 2.0 MB settled and 3.2 MB after the
// clean stop.
func (d *daemon) settle() error {
	if d.name == "tsd" {
		return d.post("/api/compact")
	}
	if err := d.get("/internal/force_flush"); err != nil {
		return err
	}
	if err := d.waitGauges("flushed", vmFlushed); err != nil {
		return err
	}
	if err := d.get("/internal/force_merge"); err != nil {
		return err
	}
	return d.waitGauges("merged", vmMerged)
}

// VictoriaMetrics' gauges (/metrics) that are zero once its rows are on
// disk, and once its merges are done.
var (
	vmFlushed = []string{`vm_pending_rows{type="storage"}`, `vm_pending_rows{type="indexdb"}`,
		`vm_parts{type="storage/inmemory"}`, `vm_parts{type="indexdb/inmemory"}`}
	vmMerged = append([]string{"vm_active_force_merges", `vm_active_merges{type="storage/inmemory"}`,
		`vm_active_merges{type="storage/small"}`, `vm_active_merges{type="storage/big"}`,
		`vm_active_merges{type="indexdb/inmemory"}`, `vm_active_merges{type="indexdb/file"}`}, vmFlushed...)
)

// waitGauges polls /metrics until every named gauge reads 0 (a gauge
// missing from the page counts as 0), for up to 10 minutes.
func (d *daemon) waitGauges(what string, names []string) error {
	for range 1200 {
		resp, err := http.Get("http://" + d.http + "/metrics")
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if nonZero(b, names) == "" {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("%s not %s after 10 minutes", d.name, what)
}

// nonZero returns the first of names whose line in the metrics page b
// holds a value other than 0, or "".
func nonZero(b []byte, names []string) string {
	for _, n := range names {
		i := bytes.Index(b, []byte("\n"+n+" "))
		if i < 0 {
			continue
		}
		line := b[i+len(n)+2:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if string(bytes.TrimSpace(line)) != "0" {
			return n
		}
	}
	return ""
}

// settledSize waits until two readings of the allocated size a second
// apart agree (deletions of merged files lag a merge) and returns it.
func (d *daemon) settledSize() (int64, error) {
	prev, err := d.allocated()
	for range 120 {
		if err != nil {
			return 0, err
		}
		time.Sleep(time.Second)
		var n int64
		if n, err = d.allocated(); err == nil && n == prev {
			return n, nil
		}
		prev = n
	}
	return prev, err
}

// allocated sums the blocks allocated to the files of the data directory,
// as du counts them, without sizeSkip.
func (d *daemon) allocated() (int64, error) {
	var n int64
	err := filepath.WalkDir(d.dataDir, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.IsDir() {
			if d.sizeSkip != "" && p == filepath.Join(d.dataDir, d.sizeSkip) {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		}
		return nil
	})
	return n, err
}

func mb(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 0, 64) + " MB" }

// coldBinary drops the executable at path from the page cache, so that
// each daemon starts reading its binary from disk, as after a reboot.
// A binary the linker has just written (tsd's, built every run) sits in
// the page cache in large folios, which the kernel maps 2 MiB at a time:
// tsd's resident memory at rest read 55 MB so against 36 MB read from
// disk, while VictoriaMetrics', built once and kept, had long been read
// back in small pages. The peak memory rows would otherwise compare a
// warm binary with a cold one.
func coldBinary(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil { // dirty pages are not dropped
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop %s from the page cache: %w", path, err)
	}
	return nil
}
