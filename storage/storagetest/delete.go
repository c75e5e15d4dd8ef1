package storagetest

import (
	"fmt"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) deleteCases() []testCase {
	return []testCase{
		{"Row", s.testDeleteRow},
		{"Family", s.testDeleteFamily},
		{"Column", s.testDeleteColumn},
		{"ColumnVersion", s.testDeleteColumnVersion},
		{"FamilyTimeRange", s.testDeleteFamilyTimeRange},
		{"Several", s.testDeleteSeveral},
		{"MissingIsNoop", s.testDeleteMissing},
		{"NoTombstone", s.testNoTombstone},
		{"BadInput", s.testDeleteBadInput},
		{"Range", s.testDeleteRange},
		{"RangeOpenEnds", s.testDeleteRangeOpen},
	}
}

// fillRow writes two columns of two versions in families a and b.
func fillRow(t *testing.T, tbl storage.Table, row string) {
	t.Helper()
	mustPut(t, tbl, row,
		cell(famA, "p", ms(1), "ap1"), cell(famA, "p", ms(2), "ap2"),
		cell(famA, "q", ms(1), "aq1"), cell(famA, "q", ms(2), "aq2"),
		cell(famB, "q", ms(1), "bq1"), cell(famB, "q", ms(2), "bq2"))
}

func filled(row string) []storage.Cell {
	return []storage.Cell{
		rc(row, famA, "p", ms(2), "ap2"), rc(row, famA, "p", ms(1), "ap1"),
		rc(row, famA, "q", ms(2), "aq2"), rc(row, famA, "q", ms(1), "aq1"),
		rc(row, famB, "q", ms(2), "bq2"), rc(row, famB, "q", ms(1), "bq1"),
	}
}

func mustDelete(t *testing.T, tbl storage.Table, row string, dels ...storage.Deletion) {
	t.Helper()
	if err := tbl.Delete(t.Context(), []byte(row), dels...); err != nil {
		t.Fatalf("Delete(%q, %+v): %v", row, dels, err)
	}
}

func (s *suite) testDeleteRow(t *testing.T) {
	tbl := s.std(t)
	for _, r := range []string{"r", "r\x00", "q\xff", "s"} {
		fillRow(t, tbl, r)
	}
	mustDelete(t, tbl, "r")
	wantGet(t, tbl, "r", nil)
	wantRows(t, tbl, nil, "q\xff", "r\x00", "s")
	mustDelete(t, tbl, "r\x00", storage.Deletion{Kind: storage.DeleteRow})
	wantRows(t, tbl, nil, "q\xff", "s")
	wantGet(t, tbl, "s", nil, filled("s")...)
}

func (s *suite) testDeleteFamily(t *testing.T) {
	tbl := s.std(t)
	fillRow(t, tbl, "r")
	fillRow(t, tbl, "s")
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteFamily, Family: famA})
	wantGet(t, tbl, "r", nil, filled("r")[4:]...)
	wantGet(t, tbl, "s", nil, filled("s")...)
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteFamily, Family: famB})
	wantGet(t, tbl, "r", nil)
	wantRows(t, tbl, nil, "s")
}

func (s *suite) testDeleteColumn(t *testing.T) {
	tbl := s.std(t)
	fillRow(t, tbl, "r")
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q")})
	f := filled("r")
	wantGet(t, tbl, "r", nil, f[0], f[1], f[4], f[5])
	// The empty qualifier is a column of its own.
	mustPut(t, tbl, "r", cell(famA, "", ms(1), "empty"))
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: nil})
	wantGet(t, tbl, "r", nil, f[0], f[1], f[4], f[5])
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("nope")})
	wantGet(t, tbl, "r", nil, f[0], f[1], f[4], f[5])
}

func (s *suite) testDeleteColumnVersion(t *testing.T) {
	tbl := s.std(t)
	for i := int64(1); i <= 4; i++ {
		mustPut(t, tbl, "r", cell(famA, "q", ms(i), fmt.Sprint(i)))
	}
	v := func(i int64) storage.Cell { return rc("r", famA, "q", ms(i), fmt.Sprint(i)) }
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MinTime: ms(2), MaxTime: ms(2) + 1000})
	wantGet(t, tbl, "r", nil, v(4), v(3), v(1))
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MinTime: ms(4)})
	wantGet(t, tbl, "r", nil, v(3), v(1))
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MaxTime: ms(3)})
	wantGet(t, tbl, "r", nil, v(3))
}

func (s *suite) testDeleteFamilyTimeRange(t *testing.T) {
	tbl := s.std(t)
	fillRow(t, tbl, "r")
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteFamily, Family: famA, MinTime: ms(2), MaxTime: ms(3)})
	f := filled("r")
	wantGet(t, tbl, "r", nil, f[1], f[3], f[4], f[5])
}

func (s *suite) testDeleteSeveral(t *testing.T) {
	tbl := s.std(t)
	fillRow(t, tbl, "r")
	mustDelete(t, tbl, "r",
		storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("p")},
		storage.Deletion{Kind: storage.DeleteFamily, Family: famB},
		storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MinTime: ms(1), MaxTime: ms(2)})
	wantGet(t, tbl, "r", nil, filled("r")[2])
}

func (s *suite) testDeleteMissing(t *testing.T) {
	tbl := s.std(t)
	mustDelete(t, tbl, "nothing")
	mustDelete(t, tbl, "nothing", storage.Deletion{Kind: storage.DeleteFamily, Family: famA})
	mustDelete(t, tbl, "nothing", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q")})
	if err := tbl.DeleteRange(t.Context(), []byte("a"), []byte("z")); err != nil {
		t.Fatalf("DeleteRange on an empty table: %v", err)
	}
	wantScan(t, tbl, nil)
}

// testNoTombstone checks that every kind of delete leaves nothing behind
// that hides a later put carrying an older timestamp.
func (s *suite) testNoTombstone(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	dels := map[string]func(row []byte) error{
		"row": func(r []byte) error { return tbl.Delete(ctx, r) },
		"family": func(r []byte) error {
			return tbl.Delete(ctx, r, storage.Deletion{Kind: storage.DeleteFamily, Family: famA})
		},
		"column": func(r []byte) error {
			return tbl.Delete(ctx, r, storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q")})
		},
		"version": func(r []byte) error {
			return tbl.Delete(ctx, r, storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MinTime: ms(1), MaxTime: ms(10)})
		},
		"range": func(r []byte) error { return tbl.DeleteRange(ctx, r, append(r, 0)) },
		"apply": func(r []byte) error {
			return tbl.Apply(ctx, []storage.Mutation{{Row: r, Deletes: []storage.Deletion{{Kind: storage.DeleteRow}}}})
		},
	}
	for _, name := range sortedKeys(dels) {
		row := "r-" + name
		mustPut(t, tbl, row, cell(famA, "q", ms(9), "newer"))
		if err := dels[name]([]byte(row)); err != nil {
			t.Fatalf("delete by %s: %v", name, err)
		}
		wantGet(t, tbl, row, nil)
		mustPut(t, tbl, row, cell(famA, "q", ms(1), "older"))
		wantGet(t, tbl, row, nil, rc(row, famA, "q", ms(1), "older"))
	}
}

func (s *suite) testDeleteBadInput(t *testing.T) {
	tbl := s.std(t)
	fillRow(t, tbl, "r")
	bad := []storage.Deletion{
		{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MinTime: -1000},
		{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MinTime: ms(5), MaxTime: ms(2)},
		{Kind: storage.DeleteFamily, Family: famA, MaxTime: -1},
		{Kind: storage.DeleteKind(99)},
	}
	for _, d := range bad {
		// The bad deletion comes second: the good first one must not apply.
		err := tbl.Delete(t.Context(), []byte("r"), storage.Deletion{Kind: storage.DeleteFamily, Family: famB}, d)
		wantErr(t, fmt.Sprintf("Delete(%+v)", d), err, storage.ErrInvalidArgument)
	}
	wantBadFamily(t, "Delete unknown family",
		tbl.Delete(t.Context(), []byte("r"), storage.Deletion{Kind: storage.DeleteColumn, Family: "nope", Qualifier: []byte("q")}), "nope")
	wantGet(t, tbl, "r", nil, filled("r")...)
}

func (s *suite) testDeleteRange(t *testing.T) {
	tbl := s.std(t)
	s.putBinaryKeys(t, tbl)
	ctx := t.Context()
	if err := tbl.DeleteRange(ctx, []byte("a"), []byte("a\x00\xff")); err != nil {
		t.Fatal(err)
	}
	left := withoutKeys(binaryKeys, "a", "a\x00", "a\x00\x00")
	wantRows(t, tbl, nil, left...)
	if err := tbl.DeleteRange(ctx, []byte("\x00\x00"), []byte("\x00\x01")); err != nil {
		t.Fatal(err)
	}
	left = withoutKeys(left, "\x00\x00", "\x00\x00\x00")
	wantRows(t, tbl, nil, left...)
	// Bounds that are not stored keys, and an empty range.
	if err := tbl.DeleteRange(ctx, []byte("a\x00\xfe"), []byte("a\x02")); err != nil {
		t.Fatal(err)
	}
	left = withoutKeys(left, "a\x00\xff", "a\x01")
	wantRows(t, tbl, nil, left...)
	if err := tbl.DeleteRange(ctx, []byte("ab"), []byte("ab")); err != nil {
		t.Fatal(err)
	}
	wantRows(t, tbl, nil, left...)
	wantGet(t, tbl, "ab", nil, binaryKeyCells("ab")...)
}

func (s *suite) testDeleteRangeOpen(t *testing.T) {
	tbl := s.std(t)
	s.putBinaryKeys(t, tbl)
	ctx := t.Context()
	if err := tbl.DeleteRange(ctx, []byte("\xff"), nil); err != nil {
		t.Fatal(err)
	}
	left := withoutKeys(binaryKeys, "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff")
	wantRows(t, tbl, nil, left...)
	if err := tbl.DeleteRange(ctx, nil, []byte("\x00\x01")); err != nil {
		t.Fatal(err)
	}
	wantRows(t, tbl, nil, left[3:]...)
	if err := tbl.DeleteRange(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	wantScan(t, tbl, nil)
	mustPut(t, tbl, "\x00", cell(famA, "q", ms(1), "back"))
	wantGet(t, tbl, "\x00", nil, rc("\x00", famA, "q", ms(1), "back"))
}

func withoutKeys(keys []string, drop ...string) []string {
	var out []string
	for _, k := range keys {
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		if keep {
			out = append(out, k)
		}
	}
	return out
}
