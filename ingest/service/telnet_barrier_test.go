package service

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/wal"
)

// TestTelnetVersionIsDurable: version is a durability barrier. Clients on
// three connections put points, send version and read its reply; then the
// power fails (a crash clone of the one file system holding the store and
// the log keeps only what was synced). The log's own periodic sync is
// off, so only the barrier can have synced them: every point put before a
// version reply is found after restart.
func TestTelnetVersionIsDurable(t *testing.T) {
	fs := vfs.NewCrashableMem()
	headOpts := func() *head.HeadOptions {
		return &head.HeadOptions{WAL: wal.Options{FsyncInterval: -1}}
	}
	st := newStackOn(t, fs, "/db", headOpts())
	h := newTelnet(t, st, TelnetOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var served sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			served.Add(1)
			go func() {
				defer served.Done()
				h.ServeConn(c)
				c.Close()
			}()
		}
	}()
	const conns, perConn = 3, 2000
	var clients sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		clients.Add(1)
		go func() {
			defer clients.Done()
			errs <- putThenBarrier(ln.Addr().String(), "host"+strconv.Itoa(i), perConn)
		}()
	}
	clients.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The power fails now: nothing unsynced survives.
	clone := fs.CrashClone(vfs.CrashCloneCfg{})
	after := newStackOn(t, clone, "/db", headOpts())
	for i := range conns {
		got := after.points(t, "barrier.m", "host", "host"+strconv.Itoa(i))
		if len(got) != perConn {
			t.Fatalf("host%d: %d of %d points acknowledged by version survive the power loss", i, len(got), perConn)
		}
		for j, p := range got {
			if want := fmt.Sprintf("{} %d %di", (1356998400+int64(j))*1000, j); p != want {
				t.Fatalf("host%d point %d = %s, want %s", i, j, p, want)
			}
		}
	}
	ln.Close()
	served.Wait()
}

// putThenBarrier puts n points of barrier.m for host in one write, then
// version, and returns once the version reply is read.
func putThenBarrier(addr, host string, n int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	var b strings.Builder
	for j := range n {
		fmt.Fprintf(&b, "put barrier.m %d %d host=%s\n", 1356998400+j, j, host)
	}
	b.WriteString("version\n")
	if _, err := c.Write([]byte(b.String())); err != nil {
		return err
	}
	reply, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if reply != "tsd\n" {
		return fmt.Errorf("%s: reply %q before the version", host, reply)
	}
	return nil
}
