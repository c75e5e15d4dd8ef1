package pebble

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/internal/vfstest"
)

// TestOptionsFlipsOpen flips one bit in every 11th byte of a store's
// OPTIONS file, each in a copy: every copy opens (before, about one flip
// in sixteen kept the store shut: pebble refused the file).
func TestOptionsFlipsOpen(t *testing.T) {
	mem := vfs.NewMem()
	db, err := Open("/db", &Options{FS: mem, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := mem.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	var opts string
	for _, n := range names {
		if strings.HasPrefix(n, "OPTIONS-") {
			opts = "/db/" + n
		}
	}
	if opts == "" {
		t.Fatal("no OPTIONS file")
	}
	orig := vfstest.ReadFile(t, mem, opts)
	for i := 0; i < len(orig); i += 11 {
		fs := copyDir(t, mem)
		b := append([]byte(nil), orig...)
		b[i] ^= 0x10
		vfstest.WriteFile(t, fs, opts, b)
		db, err := Open("/db", &Options{FS: fs, GCInterval: -1, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Errorf("byte %d of %s flipped: %v", i, opts, err)
			continue
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
