package wal

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestOpenOnFullDisk: a log whose disk is full when it opens cannot
// create its new segment. It opens anyway and replays what it holds;
// appends fail with ErrDiskFull (not acknowledged) until space is back,
// then the first one creates the segment; a later open replays exactly the
// acknowledged records, and a close on the full disk reports no error.
func TestOpenOnFullDisk(t *testing.T) {
	fs := &faultFS{FS: vfs.NewMem()}
	l, _ := mustOpen(t, fs, quietOpts(64<<10))
	var acked []string
	for i := range 10 {
		p := fmt.Sprintf("before %d", i)
		if err := appendPayload(l, p, true); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, p)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	fs.full.Store(true)
	l, c := mustOpen(t, fs, quietOpts(64<<10))
	if got := c.payloads(); !slicesEqual(got, acked) {
		t.Fatalf("replayed on a full disk: %q, want %q", got, acked)
	}
	for i := range 3 {
		if err := appendPayload(l, fmt.Sprintf("full %d", i), false); !errors.Is(err, ErrDiskFull) {
			t.Fatalf("append on a full disk = %v, want ErrDiskFull", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close of a log that never started its segment: %v", err)
	}

	l, _ = mustOpen(t, fs, quietOpts(64<<10))
	fs.full.Store(false)
	for i := range 10 {
		p := fmt.Sprintf("after %d", i)
		if err := appendPayload(l, p, i%3 == 0); err != nil {
			t.Fatalf("append after space returned: %v", err)
		}
		acked = append(acked, p)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, c = mustOpen(t, fs, quietOpts(64<<10))
	defer l.Close()
	if got := c.payloads(); !slicesEqual(got, acked) {
		t.Fatalf("replayed %q\nwant %q", got, acked)
	}
	if s := l.ReplayStats(); len(s.Damaged) != 0 || s.CorruptRecords != 0 {
		t.Fatalf("replay found damage: %+v", s)
	}
}
