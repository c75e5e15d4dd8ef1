package pebble

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/storage"
)

// TestDamagedManifestRefused flips one byte at every 5th place of a store's
// MANIFEST, each in a copy. Pebble reads a MANIFEST up to its first bad
// record and took a flip anywhere before the last record for a torn end:
// the store opened empty and pebble deleted its sstables. Now each such
// copy is refused as corruption naming the MANIFEST, with every file left
// as it was; a flip in the last record (which looks like a torn end, and
// is not found) opens, missing at most that record's sstable.
func TestDamagedManifestRefused(t *testing.T) {
	mem := vfs.NewMem()
	db, err := Open("/db", &Options{FS: mem, GCInterval: -1, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	tb := ensure(t, db, crashSpec)
	acked := map[batchID]bool{}
	for seq := range 1500 {
		b := batchID{0, 0, seq}
		if err := writeBatch(context.Background(), tb, b); err != nil {
			t.Fatal(err)
		}
		acked[b] = true
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	manifest := currentManifest(t, mem)
	orig := readAll(t, mem, manifest)
	last := lastRecordStart(t, orig)
	refused := 0
	for at := 0; at < len(orig); at += 5 {
		fs := copyDir(t, mem)
		b := bytes.Clone(orig)
		b[at] ^= 0x10
		writeAll(t, fs, manifest, b)
		before := snapshotDir(t, fs)
		db, err := Open("/db", &Options{FS: fs, GCInterval: -1, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			if !errors.Is(err, storage.ErrCorruption) || !strings.Contains(err.Error(), "MANIFEST") {
				t.Errorf("byte %d flipped: open error %v, want corruption naming the MANIFEST", at, err)
			}
			if after := snapshotDir(t, fs); !equalDirs(before, after) {
				t.Errorf("byte %d flipped: the refused open changed the files", at)
			}
			refused++
			continue
		}
		_, missing, half := audit(t, db, acked)
		db.Close()
		if at < last && len(missing)+len(half) > 0 {
			t.Errorf("byte %d flipped (the last record starts at %d): opened with %d acknowledged batches missing, %d half",
				at, last, len(missing), len(half))
		}
	}
	if refused == 0 {
		t.Error("no flip was refused")
	}
	t.Logf("MANIFEST of %d bytes, last record at %d: %d of %d flips refused", len(orig), last, refused, (len(orig)+4)/5)
}

// currentManifest returns the path of the store's current MANIFEST.
func currentManifest(t *testing.T, fs vfs.FS) string {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "marker.manifest."); ok {
			return "/db/" + rest[strings.IndexByte(rest, '.')+1:]
		}
	}
	t.Fatal("no manifest marker")
	return ""
}

// lastRecordStart returns the offset of a MANIFEST's last record.
func lastRecordStart(t *testing.T, data []byte) int {
	t.Helper()
	r := record.NewReader(bytes.NewReader(data), 0)
	last := -1
	for {
		at := r.Offset()
		rr, err := r.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, rr)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("the undamaged MANIFEST: %v", err)
			}
			return last
		}
		last = int(at)
	}
}

// snapshotDir returns the contents of every file in /db.
func snapshotDir(t *testing.T, fs vfs.FS) map[string]string {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		out[n] = string(readAll(t, fs, "/db/"+n))
	}
	return out
}

func equalDirs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
