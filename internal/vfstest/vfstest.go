package vfstest

import (
	"io"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ReadFile returns the bytes of the file at path on fs.
func ReadFile(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
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

// WriteFile writes b as the file at path on fs, synced, creating its
// directory. It writes a copy: pebble's in-memory files mangle the buffer
// a Write was given in invariants builds (the race detector's), to catch
// callers that reuse it.
func WriteFile(t testing.TB, fs vfs.FS, path string, b []byte) {
	t.Helper()
	err := fs.MkdirAll(fs.PathDir(path), 0o755)
	var f vfs.File
	if err == nil {
		f, err = fs.Create(path, vfs.WriteCategoryUnspecified)
	}
	if err == nil {
		_, err = f.Write(slices.Clone(b))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
