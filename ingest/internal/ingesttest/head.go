package ingesttest

import (
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/wal"
)

// Quiet is the tests' logger: it discards everything.
var Quiet = slog.New(slog.DiscardHandler)

// WAL is the tests' log options: 64 KiB segments, so that a test crosses
// rotations, and no fsync timer.
var WAL = wal.Options{SegmentSize: 64 << 10, FsyncInterval: -1}

// OpenHead opens a head with open (head.OpenHead) on fs, its log in "wal",
// or in a temporary directory on the OS's file system; an error fails the
// test.
func OpenHead[O, H any](t testing.TB, open func(vfs.FS, string, O) (H, error), fs vfs.FS, opts O) H {
	t.Helper()
	dir := "wal"
	if fs == vfs.Default {
		dir = t.TempDir()
	}
	h, err := open(fs, dir, opts)
	if err != nil {
		t.Fatalf("open head: %v", err)
	}
	return h
}
