package ingesttest

import (
	"io"
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

// WriteFile writes b as the file at path on fs, creating its directory.
// It writes a copy: pebble's in-memory files in invariants builds mangle
// the buffer a Write was given.
func WriteFile(t testing.TB, fs vfs.FS, path string, b []byte) {
	t.Helper()
	if err := fs.MkdirAll(fs.PathDir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append([]byte(nil), b...)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
