package uid

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func problemLines(r Report) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, fmt.Sprintf("%s %s: %s", p.Class, p.Kind, p.Message))
	}
	return out
}

func TestFsckCleanTable(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	tags := []Tag{{[]byte("host"), []byte("web01")}}
	if _, err := u.ResolvePoint(ctx, nil, []byte("m"), tags); err != nil {
		t.Fatal(err)
	}
	rawPut(t, u.Table(), []byte{0, 0, 1}, "name", "metric_meta", []byte(`{}`)) // UIDMeta is skipped
	r, err := u.Fsck(ctx, false)
	if err != nil || len(r.Problems) != 0 {
		t.Fatalf("clean table: %q %v", problemLines(r), err)
	}
	if r.Cells != 10 || r.Forward != [NumKinds]int{1, 1, 1} || r.MaxID != [NumKinds]ID{1, 1, 1} {
		t.Errorf("report %+v", r)
	}
}

// TestFsckEveryClass builds each inconsistency OpenTSDB's fsck knows, and
// malformed cells, with raw puts, checks the report, repairs, and checks
// the repaired cells.
func TestFsckEveryClass(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	tbl := u.Table()
	for _, n := range []string{"a", "b", "d"} {
		mustResolve(t, u, Metric, n)
	}
	for _, n := range []string{"k1", "k2", "k3"} {
		mustResolve(t, u, TagK, n)
	}
	for _, n := range []string{"v1", "v2", "v3", "v5", "v6", "v7"} {
		mustResolve(t, u, TagV, n)
	}
	// metrics: an ID above MAXID; a forward map without reverse.
	rawPut(t, tbl, []byte("c"), "id", "metrics", []byte{0, 0, 5})
	rawPut(t, tbl, []byte{0, 0, 5}, "name", "metrics", []byte("c"))
	rawDelete(t, tbl, []byte{0, 0, 3}, "name", "metrics")
	// tagk: MAXID on 4 bytes.
	rawPut(t, tbl, []byte{0}, "id", "tagk", []byte{0, 0, 0, 3})
	// tagv: reverse of v1 names another name; v4 duplicates v3's UID; v5's
	// forward map is gone; 000006's reverse points at v6, which maps to 000005.
	rawPut(t, tbl, []byte{0, 0, 1}, "name", "tagv", []byte("zzz"))
	rawPut(t, tbl, []byte("v4"), "id", "tagv", []byte{0, 0, 3})
	rawDelete(t, tbl, []byte("v5"), "id", "tagv")
	rawDelete(t, tbl, []byte("v7"), "id", "tagv")
	rawPut(t, tbl, []byte{0, 0, 6}, "name", "tagv", []byte("v6"))

	want := []string{
		"max-id-bad-width tagk: Invalid maximum ID for tagk: should be on 8 bytes (found 4: 00000003)",
		"id-above-max-id metrics: We found an ID of 5 for metrics but the max ID is only 3!  Future IDs may be double-assigned!",
		"forward-without-reverse metrics: Forward metrics mapping is missing reverse mapping: d -> 000003",
		"max-id-count-mismatch tagv: Max ID for tagv is 6 but only 4 entries were found.  Maybe 2 IDs were deleted?",
		"forward-reverse-mismatch tagv: Forward tagv mapping v1 -> 000001 is different than reverse mapping: 000001 -> zzz (and zzz has no forward mapping to it)",
		`duplicate-forward tagv: Inconsistent forward tagv mapping: "v3", "v4" all -> 000003 (reverse 000003 -> "v3")`,
		"reverse-without-forward tagv: Reverse tagv mapping is missing forward mapping: 000004 -> v5",
		"reverse-without-forward tagv: Inconsistent reverse tagv mapping 000006 -> v6 vs 000005 -> v6 / v6 -> 000005",
	}
	r, err := u.Fsck(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := problemLines(r); !slices.Equal(got, want) {
		t.Fatalf("report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Errors() != 7 || r.Unfixed() != 7 {
		t.Errorf("errors %d unfixed %d", r.Errors(), r.Unfixed())
	}

	r, err = u.Fsck(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := problemLines(r); !slices.Equal(got, want) {
		t.Errorf("fix run reported:\n%s", strings.Join(got, "\n"))
	}
	for _, p := range r.Problems {
		if p.Class != MaxIDCountMismatch && (!p.Fixed || p.FixErr != "") {
			t.Errorf("not fixed: %s %s (%s)", p.Class, p.Message, p.FixErr)
		}
	}
	hexEq(t, "metrics MAXID raised", rawGet(t, tbl, []byte{0}, "id", "metrics"), be8(5))
	hexEq(t, "tagk MAXID rewritten", rawGet(t, tbl, []byte{0}, "id", "tagk"), be8(3))
	hexEq(t, "d reverse restored", rawGet(t, tbl, []byte{0, 0, 3}, "name", "metrics"), []byte("d"))
	hexEq(t, "v1 reverse repointed", rawGet(t, tbl, []byte{0, 0, 1}, "name", "tagv"), []byte("v1"))
	hexEq(t, "duplicate renamed", rawGet(t, tbl, []byte("fsck.v3.v4"), "id", "tagv"), []byte{0, 0, 3})
	hexEq(t, "duplicate reverse", rawGet(t, tbl, []byte{0, 0, 3}, "name", "tagv"), []byte("fsck.v3.v4"))
	for _, gone := range []struct {
		row       []byte
		fam, qual string
	}{{[]byte("v3"), "id", "tagv"}, {[]byte("v4"), "id", "tagv"}, {[]byte{0, 0, 4}, "name", "tagv"}, {[]byte{0, 0, 6}, "name", "tagv"}} {
		if v := rawGet(t, tbl, gone.row, gone.fam, gone.qual); v != nil {
			t.Errorf("%x %s:%s should be deleted, holds %x", gone.row, gone.fam, gone.qual, v)
		}
	}
	r, err = u.Fsck(ctx, false)
	if err != nil || r.Errors() != 0 {
		t.Fatalf("after repair: %q %v", problemLines(r), err)
	}
	// The repaired table assigns again without conflict.
	if id := mustResolve(t, u, Metric, "e"); id != 6 {
		t.Errorf("next metric uid %d, want 6", id)
	}
	if id := mustResolve(t, u, TagV, "v3"); id != 7 {
		t.Errorf("v3 re-created as %d, want 7", id)
	}
}

func TestFsckMalformedCellsAreReportedNotFixed(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	tbl := u.Table()
	mustResolve(t, u, Metric, "ok")
	rawPut(t, tbl, []byte("short"), "id", "metrics", []byte{0, 1})
	rawPut(t, tbl, []byte("zero"), "id", "metrics", []byte{0, 0, 0})
	rawPut(t, tbl, []byte{0, 7}, "name", "tagk", []byte("x"))
	rawPut(t, tbl, []byte("foreign"), "id", "other", []byte("ignored"))
	r, err := u.Fsck(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"bad-reverse-row tagk: Reverse tagk mapping row 0007 is malformed: uid of 2 bytes, expected 3",
		"bad-forward-value metrics: Forward metrics mapping short -> 0001 is malformed: uid of 2 bytes, expected 3",
		"bad-forward-value metrics: Forward metrics mapping zero -> 000000 is malformed: uid 0 is never assigned",
	}
	if got := problemLines(r); !slices.Equal(got, want) {
		t.Fatalf("report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Unfixed() != 3 {
		t.Errorf("unfixed %d", r.Unfixed())
	}
	hexEq(t, "malformed cell left alone", rawGet(t, tbl, []byte("short"), "id", "metrics"), []byte{0, 1})
}
