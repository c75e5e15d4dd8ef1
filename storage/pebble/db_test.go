package pebble_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

var ctx = context.Background()

var spec = storage.TableSpec{Name: "t", Families: []storage.FamilySpec{{Name: "f"}, {Name: "g", MaxVersions: 1}}}

func mustTable(t testing.TB, db storage.DB, s storage.TableSpec) storage.Table {
	t.Helper()
	if err := db.EnsureTable(ctx, s); err != nil {
		t.Fatalf("EnsureTable: %v", err)
	}
	tb, err := db.Table(ctx, s.Name)
	if err != nil {
		t.Fatalf("Table: %v", err)
	}
	return tb
}

func TestReopenKeepsDataAndCatalog(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, db, spec)
	if err := tb.Put(ctx, []byte("r\x00\xff"), []storage.Cell{{Family: "f", Qualifier: []byte{0}, Timestamp: 5000, Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	specs, err := db.Tables(ctx)
	if err != nil || len(specs) != 1 || specs[0].Name != "t" || len(specs[0].Families) != 2 || specs[0].Families[1].MaxVersions != 1 {
		t.Fatalf("Tables after reopen = %+v, %v", specs, err)
	}
	tb, _ = db.Table(ctx, "t")
	cells, err := tb.Get(ctx, []byte("r\x00\xff"), nil)
	if err != nil || len(cells) != 1 || string(cells[0].Value) != "v" || cells[0].Timestamp != 5000 {
		t.Fatalf("Get after reopen = %+v, %v", cells, err)
	}
}

func TestOpenLockedNamesLockFile(t *testing.T) {
	dir := t.TempDir()
	db := openAt(t, dir)
	_ = db
	_, err := pebble.Open(dir, nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "LOCK")) {
		t.Fatalf("second Open = %v, want an error naming %s", err, filepath.Join(dir, "LOCK"))
	}
}

func openAt(t testing.TB, dir string) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestOpenCorruptNamesFile(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustTable(t, db, spec)
	db.Close()
	// Without its copy, which would mend it (TestDamagedManifest).
	copies, _ := filepath.Glob(filepath.Join(dir, "TSD-MANIFEST-*"))
	for _, c := range copies {
		os.Remove(c)
	}
	name := corruptFile(t, dir, "MANIFEST-")
	_, err = pebble.Open(dir, nil)
	if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "OPTIONS") {
		t.Fatalf("Open of a store with a damaged %s = %v, want an error naming it", name, err)
	}
}

// TestOpenSetsAsideDamagedOptions damages the OPTIONS file: the store opens
// with its tables, keeps the file as .damaged and says so in an ERROR line;
// pebble writes a new OPTIONS file, and the next open is a plain one.
func TestOpenSetsAsideDamagedOptions(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, db, spec)
	if err := tb.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	name := corruptFile(t, dir, "OPTIONS-")
	var logs bytes.Buffer
	db, err = pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("open with a damaged %s: %v", name, err)
	}
	if cells, err := mustTable(t, db, spec).Get(ctx, []byte("r"), nil); err != nil || len(cells) != 1 {
		t.Errorf("row r after the open: %v, %v", cells, err)
	}
	db.Close()
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), name) {
		t.Errorf("no ERROR line naming %s:\n%s", name, logs.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, name+".damaged")); err != nil || string(b) != "not a pebble file at all\n" {
		t.Errorf("%s.damaged: %q, %v", name, b, err)
	}
	logs.Reset()
	db, err = pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("the open after: %v", err)
	}
	db.Close()
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the open after logged an error:\n%s", logs.String())
	}
}

// corruptFile overwrites the first file named prefix* in dir with garbage.
func corruptFile(t *testing.T, dir, prefix string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := os.WriteFile(filepath.Join(dir, e.Name()), []byte("not a pebble file at all\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return e.Name()
		}
	}
	t.Fatalf("no %s* file in %s", prefix, dir)
	return ""
}

func TestCloseEndsScannersAndCalls(t *testing.T) {
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, db, spec)
	for _, r := range []string{"a", "b", "c"} {
		if err := tb.Put(ctx, []byte(r), []storage.Cell{{Family: "f", Value: []byte(r)}}); err != nil {
			t.Fatal(err)
		}
	}
	sc := tb.Scan(ctx, nil)
	if !sc.Next() {
		t.Fatalf("first Next: %v", sc.Err())
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close with an open scanner: %v", err)
	}
	if sc.Next() || !errors.Is(sc.Err(), storage.ErrClosed) {
		t.Fatalf("scanner after Close: err %v, want ErrClosed", sc.Err())
	}
	if err := sc.Close(); !errors.Is(err, storage.ErrClosed) || !errors.Is(sc.Close(), storage.ErrClosed) {
		t.Fatalf("scanner Close twice = %v", err)
	}
	if err := tb.Put(ctx, []byte("d"), []storage.Cell{{Family: "f"}}); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}
	if _, err := db.Tables(ctx); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Tables after Close = %v", err)
	}
	if err := db.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("second Close = %v", err)
	}
}

func TestDroppedHandleIsNotFound(t *testing.T) {
	db := openTemp(t, nil)
	tb := mustTable(t, db, spec)
	row := []byte("r")
	if err := tb.Put(ctx, row, []storage.Cell{{Family: "f", Value: []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	if err := db.DropTable(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Put(ctx, row, []storage.Cell{{Family: "f"}}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Put on dropped handle = %v, want ErrNotFound", err)
	}
	tb2 := mustTable(t, db, spec)
	if _, err := tb2.Get(ctx, row, nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get on recreated table = %v, want ErrNotFound (data must not survive a drop)", err)
	}
}

func TestBadInputIsErrorNotPanic(t *testing.T) {
	db := openTemp(t, nil)
	tb := mustTable(t, db, spec)
	cases := map[string]error{
		"empty table name": db.EnsureTable(ctx, storage.TableSpec{Families: []storage.FamilySpec{{Name: "f"}}}),
		"empty family":     db.EnsureTable(ctx, storage.TableSpec{Name: "x", Families: []storage.FamilySpec{{}}}),
		"nil row":          tb.Put(ctx, nil, []storage.Cell{{Family: "f"}}),
		"unknown family":   tb.Put(ctx, []byte("r"), []storage.Cell{{Family: "nope"}}),
		"odd timestamp":    tb.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Timestamp: 1}}),
		"bad regex":        tb.Scan(ctx, &storage.ScanOptions{RowRegex: "a)|(b"}).Err(),
		"nil row delete":   tb.Delete(ctx, nil),
		"nil row counter":  func() error { _, err := tb.Increment(ctx, nil, "f", nil, 1); return err }(),
		"unknown table":    func() error { _, err := db.Table(ctx, "missing"); return err }(),
		"negative limit":   tb.Scan(ctx, &storage.ScanOptions{Limit: -1}).Err(),
	}
	for name, err := range cases {
		if !errors.Is(err, storage.ErrInvalidArgument) && !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: err %v, want ErrInvalidArgument or ErrNotFound", name, err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	bad := []pebble.Options{{CacheSize: -1}, {MemTableSize: 10}, {BloomBitsPerKey: 100}, {Compression: "lz99"}}
	for _, o := range bad {
		if _, err := pebble.Open(t.TempDir(), &o); !errors.Is(err, storage.ErrInvalidArgument) {
			t.Errorf("Open with %+v = %v, want ErrInvalidArgument", o, err)
		}
	}
	o := (*pebble.Options)(nil).EnsureDefaults()
	if o.GCInterval != 10*time.Minute || o.Compression != pebble.CompressionSmall || o.FS == nil || o.Clock == nil {
		t.Fatalf("defaults = %+v", o)
	}
}
