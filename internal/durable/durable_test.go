package durable

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/tsd-db/tsd/internal/vfstest"
)

func read(t *testing.T, fs vfs.FS, path string) string {
	t.Helper()
	return string(vfstest.ReadFile(t, fs, path))
}

// TestWriteFileSurvivesCrash: after a crash, a file written and synced
// by WriteFile holds its new bytes, and one whose WriteFile never ran
// holds its old ones; never a mix.
func TestWriteFileSurvivesCrash(t *testing.T) {
	mem := vfs.NewCrashableMem()
	if err := mem.MkdirAll("d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(mem, ""); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(mem, "d/f", []byte("old"), vfs.WriteCategoryUnspecified); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(mem, "d/f", []byte("new bytes"), vfs.WriteCategoryUnspecified); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if got := read(t, crashed, "d/f"); got != "new bytes" {
		t.Fatalf("after a crash the file holds %q", got)
	}
}

// TestWriteFileFailureKeepsOld: a write that fails (an injected error on
// every write) leaves the old bytes and returns the file system's error.
func TestWriteFileFailureKeepsOld(t *testing.T) {
	mem := vfs.NewMem()
	if err := WriteFile(mem, "f", []byte("old"), vfs.WriteCategoryUnspecified); err != nil {
		t.Fatal(err)
	}
	failing := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileWrite {
			return errorfs.ErrInjected
		}
		return nil
	}))
	err := WriteFile(failing, "f", []byte("new"), vfs.WriteCategoryUnspecified)
	if !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("err = %v, want the injected error wrapped", err)
	}
	if got := read(t, mem, "f"); got != "old" {
		t.Fatalf("after a failed write the file holds %q", got)
	}
}
