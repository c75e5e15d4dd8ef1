package uid

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/schema"
)

func TestSuggest(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	for _, n := range []string{"sys.cpu.user", "sys.cpu.nice", "sys.mem", "a", "中文", "é", "sys"} {
		mustResolve(t, u, Metric, n)
	}
	mustResolve(t, u, TagK, "sys.tagk")
	for _, tc := range []struct {
		prefix string
		max    int
		want   []string
	}{
		{"sys.cpu", 0, []string{"sys.cpu.nice", "sys.cpu.user"}},
		{"sys", 2, []string{"sys", "sys.cpu.nice"}},
		{"", 0, []string{"a", "sys", "sys.cpu.nice", "sys.cpu.user", "sys.mem", "é", "中文"}},
		{"x", 0, nil},
		{"中", 0, []string{"中文"}},
	} {
		got, err := u.Suggest(ctx, Metric, tc.prefix, tc.max)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Suggest(%q, %d) = %q, %v; want %q", tc.prefix, tc.max, got, err, tc.want)
		}
	}
	v := openUIDs(t, openDB(t), Options{})
	for i := 0; i < 30; i++ {
		mustResolve(t, v, TagV, strings.Repeat("v", i+1))
	}
	if got, _ := v.Suggest(ctx, TagV, "", 0); len(got) != DefaultSuggestMax {
		t.Errorf("default max: %d names", len(got))
	}
}

func TestSuggestLatin1(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{Format: schema.FormatOpenTSDB})
	for _, n := range []string{"zz", "é1", "é2", "ÿ"} {
		mustResolve(t, u, TagV, n)
	}
	got, err := u.Suggest(ctx, TagV, "é", 0)
	if err != nil || !slices.Equal(got, []string{"é1", "é2"}) {
		t.Errorf("Suggest(é) = %q, %v", got, err)
	}
	got, _ = u.Suggest(ctx, TagV, "", 0)
	if !slices.Equal(got, []string{"zz", "é1", "é2", "ÿ"}) {
		t.Errorf("Suggest() = %q", got)
	}
}

func TestRename(t *testing.T) {
	db := openDB(t)
	u := openUIDs(t, db, Options{})
	id := mustResolve(t, u, Metric, "old.name")
	mustResolve(t, u, Metric, "taken")
	if err := u.Rename(ctx, Metric, "old.name", "new.name"); err != nil {
		t.Fatal(err)
	}
	tbl := u.Table()
	hexEq(t, "new forward", rawGet(t, tbl, []byte("new.name"), "id", "metrics"), []byte{0, 0, 1})
	hexEq(t, "reverse", rawGet(t, tbl, []byte{0, 0, 1}, "name", "metrics"), []byte("new.name"))
	if v := rawGet(t, tbl, []byte("old.name"), "id", "metrics"); v != nil {
		t.Errorf("old forward map kept: %x", v)
	}
	if got, err := u.Lookup(ctx, Metric, []byte("new.name")); err != nil || got != id {
		t.Errorf("Lookup new = %d, %v", got, err)
	}
	if _, err := u.Lookup(ctx, Metric, []byte("old.name")); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("old name still cached: %v", err)
	}
	if name, _ := u.Name(ctx, Metric, id); name != "new.name" {
		t.Errorf("Name = %q", name)
	}
	err := u.Rename(ctx, Metric, "new.name", "taken")
	if !errors.Is(err, ErrNameExists) || !strings.Contains(err.Error(), `an UID with name "taken" for metrics already exists`) {
		t.Errorf("rename onto existing: %v", err)
	}
	if err := u.Rename(ctx, Metric, "missing", "x"); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("rename missing: %v", err)
	}
	if err := u.Rename(ctx, Metric, "new.name", "bad\x01"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("rename to bad name: %v", err)
	}
	if r, err := u.Fsck(ctx, false); err != nil || r.Errors() != 0 {
		t.Errorf("fsck after renames: %+v %v", r.Problems, err)
	}
}

func TestDelete(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	mustResolve(t, u, TagK, "a")
	id := mustResolve(t, u, TagK, "gone")
	tbl := u.Table()
	rawPut(t, tbl, []byte{0, 0, 2}, "name", "tagk_meta", []byte(`{"uid":"000002"}`))
	if err := u.Delete(ctx, TagK, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		row       []byte
		fam, qual string
	}{{[]byte("gone"), "id", "tagk"}, {[]byte{0, 0, 2}, "name", "tagk"}, {[]byte{0, 0, 2}, "name", "tagk_meta"}} {
		if v := rawGet(t, tbl, c.row, c.fam, c.qual); v != nil {
			t.Errorf("%x %s:%s survived: %q", c.row, c.fam, c.qual, v)
		}
	}
	hexEq(t, "MAXID unchanged", rawGet(t, tbl, []byte{0}, "id", "tagk"), be8(2))
	if _, err := u.Name(ctx, TagK, id); !errors.Is(err, ErrNoSuchID) {
		t.Errorf("deleted id still named: %v", err)
	}
	if again := mustResolve(t, u, TagK, "gone"); again != 3 {
		t.Errorf("re-created name got %d, want 3 (ids are never reused)", again)
	}
	if err := u.Delete(ctx, TagK, "never"); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("delete missing: %v", err)
	}
}
