package flush

import (
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/internal/vfstest"
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

// TestWriterIDDamagedByte flips every byte of a WRITERID file in several
// ways: each load gives the id the file held, never another, and writes
// the file whole again. Before the file held one unchecked copy, and one
// flipped hex digit made another valid id.
func TestWriterIDDamagedByte(t *testing.T) {
	const id = 0x1a2b3c4d
	good := appendWriterID(nil, id)
	for at := range good {
		for _, x := range []byte{0x01, 0x20, 0x80, 0xff, good[at] ^ '7'} {
			if x == 0 {
				continue
			}
			fs := vfs.NewMem()
			b := append([]byte(nil), good...)
			b[at] ^= x
			vfstest.WriteFile(t, fs, "data/"+WriterIDFile, b)
			got, err := LoadWriterID(fs, "data")
			if err != nil || got != id {
				t.Fatalf("byte %d ^ %02x (%q): id %08x, %v; want %08x", at, x, b, got, err, uint32(id))
			}
			if after := vfstest.ReadFile(t, fs, "data/"+WriterIDFile); string(after) != string(good) {
				t.Fatalf("byte %d ^ %02x: file %q after the load, want %q", at, x, after, good)
			}
		}
	}
}

// TestWriterIDGuardForms: the unguarded form tsd wrote before loads and
// is rewritten guarded; two lines that check out but disagree, or none
// that does, are refused naming the file.
func TestWriterIDGuardForms(t *testing.T) {
	fs := vfs.NewMem()
	vfstest.WriteFile(t, fs, "data/"+WriterIDFile, []byte("1a2b3c4d\n"))
	if got, err := LoadWriterID(fs, "data"); err != nil || got != 0x1a2b3c4d {
		t.Fatalf("unguarded form: %08x, %v", got, err)
	}
	if after := vfstest.ReadFile(t, fs, "data/"+WriterIDFile); string(after) != string(appendWriterID(nil, 0x1a2b3c4d)) {
		t.Fatalf("unguarded form rewritten as %q", after)
	}
	mixed := append(appendWriterID(nil, 0x1a2b3c4d)[:guardedLine], appendWriterID(nil, 0x1a2b3c4e)[:guardedLine]...)
	bad := append([]byte(nil), appendWriterID(nil, 7)...)
	bad[3] ^= 1
	bad[guardedLine+12] ^= 1
	for _, b := range [][]byte{mixed, bad} {
		fs := vfs.NewMem()
		vfstest.WriteFile(t, fs, "data/"+WriterIDFile, b)
		if _, err := LoadWriterID(fs, "data"); err == nil || !strings.Contains(err.Error(), WriterIDFile) {
			t.Errorf("%q: %v, want an error naming the file", b, err)
		}
	}
}
