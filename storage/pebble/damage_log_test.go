package pebble

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/storage"
)

// TestDamagedLogIsReported flips one byte in the middle of pebble's newest
// log after a power loss, at several places. Acknowledged batches whose
// only copy is that log must never vanish silently: the open fails as
// corruption, naming the log's replay and not another file. This is what
// pebble's WAL sync chunks give (format FormatWALSyncChunks and later): a
// reader that meets a damaged chunk before the offset a later chunk says
// was synced knows it is damage, not the log's torn end. Stores at earlier
// formats (sstables of row blocks, about 5 % smaller: options.go) lose
// the log's records after the damage without a word, and fail here.
func TestDamagedLogIsReported(t *testing.T) {
	mem := vfs.NewCrashableMem()
	db := openOn(t, mem, false)
	tb := ensure(t, db, crashSpec)
	acked := map[batchID]bool{}
	for seq := range 200 {
		b := batchID{0, 0, seq}
		if err := writeBatch(context.Background(), tb, b); err != nil {
			t.Fatal(err)
		}
		acked[b] = true
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log := newestLog(t, crashed)
	size := len(readAll(t, crashed, log))
	if size < 32<<10 {
		t.Fatalf("newest log %s holds %d bytes: too little to damage its middle", log, size)
	}
	for _, at := range []int{size / 4, size / 2, 3 * size / 4} {
		fs := copyDir(t, crashed)
		b := readAll(t, fs, log)
		b[at] ^= 0x10
		writeAll(t, fs, log, b)
		db, err := Open("/db", &Options{FS: fs, GCInterval: -1, MemTableSize: 1 << 20, CacheSize: 1 << 20})
		if err == nil {
			found, missing, half := audit(t, db, acked)
			db.Close()
			t.Fatalf("byte %d of %s flipped: the store opened with %d batches, %d acknowledged ones missing, %d half; want the damage reported",
				at, log, found, len(missing), len(half))
		}
		if !errors.Is(err, storage.ErrCorruption) || !strings.Contains(err.Error(), "replaying WAL") ||
			strings.Contains(err.Error(), "OPTIONS") {
			t.Errorf("byte %d of %s flipped: open error %v, want corruption in the log's replay", at, log, err)
		}
	}
}

// newestLog returns the path of the highest-numbered pebble log in /db.
func newestLog(t *testing.T, fs vfs.FS) string {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	best, bestNum := "", uint64(0)
	for _, n := range names {
		if num, ok := parseLogName(n); ok && (best == "" || num > bestNum) {
			best, bestNum = n, num
		}
	}
	if best == "" {
		t.Fatal("no pebble log in /db")
	}
	return "/db/" + best
}

// copyDir copies every file of /db into a new in-memory file system.
func copyDir(t *testing.T, fs vfs.FS) vfs.FS {
	t.Helper()
	out := vfs.NewMem()
	if err := out.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		writeAll(t, out, "/db/"+n, readAll(t, fs, "/db/"+n))
	}
	return out
}

func readAll(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeAll(t *testing.T, fs vfs.FS, name string, b []byte) {
	t.Helper()
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}
