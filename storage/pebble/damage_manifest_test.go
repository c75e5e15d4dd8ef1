package pebble

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/internal/vfstest"
	"github.com/tsd-db/tsd/storage"
)

// TestDamagedManifest flips one byte at every 7th place of a store's
// MANIFEST, each in a copy of the store. Pebble reads a MANIFEST up to its
// first bad record and took a flip anywhere before the last record for a
// torn end: the store opened empty and pebble deleted its sstables.
//
// With the MANIFEST's copy beside it, every flip is mended from the copy:
// the store opens with every acknowledged batch, the damaged file kept.
// Without the copy, a flip before the last record is refused as corruption
// naming the MANIFEST, every file left as it was; a flip in the last record
// (which looks like a torn end) opens, missing at most that record's
// sstable.
func TestDamagedManifest(t *testing.T) {
	mem := vfs.NewMem()
	db, err := Open("/db", &Options{FS: mem, GCInterval: -1, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	acked := map[batchID]bool{}
	writeAcked(t, ensure(t, db, crashSpec), acked, 0, 1500)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	manifest := currentManifest(t, mem)
	orig := vfstest.ReadFile(t, mem, manifest)
	copyPath := "/db/" + mirrorPrefix + mem.PathBase(manifest)
	if c := vfstest.ReadFile(t, mem, copyPath); !bytes.Equal(c, orig) {
		t.Fatalf("after Close the MANIFEST's copy holds %d bytes that differ from its %d", len(c), len(orig))
	}
	last := lastRecordStart(t, orig)
	stride := 7
	if invariants.RaceEnabled {
		stride = 97 // an open and its audit are about ten times slower
	}
	t.Run("with its copy", func(t *testing.T) {
		for at := 0; at < len(orig); at += stride {
			fs := flippedStore(t, mem, manifest, orig, at)
			db, err := Open("/db", &Options{FS: fs, GCInterval: -1, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Errorf("byte %d flipped: %v", at, err)
				continue
			}
			_, missing, half := audit(t, db, acked)
			n := db.RestoredManifests()
			db.Close()
			if len(missing)+len(half) > 0 || n != 1 {
				t.Errorf("byte %d flipped: %d acknowledged batches missing, %d half, %d MANIFESTs mended", at, len(missing), len(half), n)
			}
			if k := vfstest.ReadFile(t, fs, manifest+".damaged"); k[at] == orig[at] {
				t.Errorf("byte %d flipped: %s.damaged is not the damaged file", at, manifest)
			}
		}
	})
	t.Run("without its copy", func(t *testing.T) {
		refused := 0
		for at := 0; at < len(orig); at += stride {
			fs := flippedStore(t, mem, manifest, orig, at)
			if err := fs.Remove(copyPath); err != nil {
				t.Fatal(err)
			}
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
		t.Logf("MANIFEST of %d bytes, last record at %d: %d of %d flips refused", len(orig), last, refused, (len(orig)+stride-1)/stride)
	})
}

// flippedStore returns a copy of the store on fs with byte at of its
// MANIFEST (orig) flipped.
func flippedStore(t *testing.T, fs vfs.FS, manifest string, orig []byte, at int) vfs.FS {
	t.Helper()
	out := copyDir(t, fs)
	b := bytes.Clone(orig)
	b[at] ^= 0x10
	vfstest.WriteFile(t, out, manifest, b)
	return out
}

// currentManifest returns the path of the store's current MANIFEST.
func currentManifest(t *testing.T, fs vfs.FS) string {
	t.Helper()
	desc, err := pebble.Peek("/db", fs)
	if err != nil || desc.ManifestFilename == "" {
		t.Fatalf("no current MANIFEST: %v", err)
	}
	return desc.ManifestFilename
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
		out[n] = string(vfstest.ReadFile(t, fs, "/db/"+n))
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
