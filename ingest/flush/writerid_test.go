package flush

import (
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestWriterIDKept(t *testing.T) {
	fs := vfs.NewCrashableMem()
	id, err := LoadWriterID(fs, "data")
	if err != nil || id == 0 {
		t.Fatalf("first load: %d, %v", id, err)
	}
	// A crash right after the first load keeps the id: it was synced.
	clone := fs.CrashClone(vfs.CrashCloneCfg{}) // nothing unsynced survives
	for _, f := range []vfs.FS{fs, clone} {
		again, err := LoadWriterID(f, "data")
		if err != nil || again != id {
			t.Fatalf("reload: %d, %v; first %d", again, err, id)
		}
	}
	other, err := LoadWriterID(vfs.NewMem(), "data")
	if err != nil || other == id {
		t.Fatalf("another directory got %d (%v), first %d", other, err, id)
	}
}

func TestWriterIDBadFile(t *testing.T) {
	for _, content := range []string{"", "00000000\n", "xyz\n", "123456789\n", "0000000g"} {
		fs := vfs.NewMem()
		fs.MkdirAll("data", 0o755)
		f, _ := fs.Create("data/"+WriterIDFile, vfs.WriteCategoryUnspecified)
		f.Write([]byte(content))
		f.Close()
		if _, err := LoadWriterID(fs, "data"); err == nil || !strings.Contains(err.Error(), WriterIDFile) {
			t.Errorf("content %q: %v, want an error naming the file", content, err)
		}
	}
}
