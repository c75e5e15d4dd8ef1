package du

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestAllocated: an empty tree takes nothing; a file of 10,000 written
// bytes (incompressible) takes at least that many, in a subdirectory as
// at the top; a missing dir is an error.
func TestAllocated(t *testing.T) {
	dir := t.TempDir()
	if n, err := Allocated(dir); err != nil || n != 0 {
		t.Fatalf("empty dir: %d, %v", n, err)
	}
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 10_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	f, err := os.Create(filepath.Join(sub, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	n, err := Allocated(dir)
	if err != nil || n < int64(len(data)) {
		t.Fatalf("one file of %d bytes: %d, %v", len(data), n, err)
	}
	if _, err := Allocated(filepath.Join(dir, "nope")); err == nil {
		t.Fatal("a missing dir: no error")
	}
}
