package storagetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) tableCases() []testCase {
	return []testCase{
		{"CreateAndOpen", s.testCreateAndOpen},
		{"EnsureTables", s.testEnsureTables},
		{"EnsureIdempotent", s.testEnsureIdempotent},
		{"AddFamily", s.testAddFamily},
		{"UpdateMaxVersions", s.testUpdateMaxVersions},
		{"UpdateTTL", s.testUpdateTTL},
		{"MissingTable", s.testMissingTable},
		{"DropTable", s.testDropTable},
		{"List", s.testListTables},
		{"BadNames", s.testBadNames},
		{"Isolation", s.testTableIsolation},
	}
}

func (s *suite) testCreateAndOpen(t *testing.T) {
	spec := stdSpec("create_me")
	_, tbl := s.table(t, spec)
	got := tbl.Spec()
	if got.Name != spec.Name {
		t.Fatalf("Spec().Name = %q, want %q", got.Name, spec.Name)
	}
	wantFamilies(t, "Spec()", got.Families, spec.Families)
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "v"))
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(1), "v"))
}

// testEnsureTables checks the helper every store opener uses: tables
// created and opened in the order asked, and a refused spec named.
func (s *suite) testEnsureTables(t *testing.T) {
	db := s.open(t)
	specs := []storage.TableSpec{stdSpec("zeta"), stdSpec("alpha")}
	tbls, err := storage.EnsureTables(t.Context(), db, specs...)
	if err != nil || len(tbls) != 2 {
		t.Fatalf("EnsureTables = %d tables, %v; want 2", len(tbls), err)
	}
	for i, tbl := range tbls {
		if got := tbl.Spec().Name; got != specs[i].Name {
			t.Fatalf("table %d is %q, want %q", i, got, specs[i].Name)
		}
	}
	mustPut(t, tbls[0], "r", cell(famA, "q", ms(1), "z"))
	wantGet(t, tbls[0], "r", nil, rc("r", famA, "q", ms(1), "z"))
	_, err = storage.EnsureTables(t.Context(), db, stdSpec("ok"), storage.TableSpec{Name: "a b", Families: []storage.FamilySpec{{Name: "f"}}})
	if err == nil || !strings.Contains(err.Error(), "ensure table a b") {
		t.Fatalf("EnsureTables with a bad spec: %v; want an error naming the table", err)
	}
}

// wantFamilies compares family lists ignoring order.
func wantFamilies(t *testing.T, what string, got, want []storage.FamilySpec) {
	t.Helper()
	if fmt.Sprint(sortFams(got)) != fmt.Sprint(sortFams(want)) {
		t.Fatalf("%s families:\n got %+v\nwant %+v", what, got, want)
	}
}

func sortFams(fs []storage.FamilySpec) []storage.FamilySpec {
	out := append([]storage.FamilySpec(nil), fs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Name < out[i].Name {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func (s *suite) testEnsureIdempotent(t *testing.T) {
	db, tbl := s.table(t, stdSpec(stdTable))
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "v"))
	for i := 0; i < 2; i++ {
		if err := db.EnsureTable(t.Context(), stdSpec(stdTable)); err != nil {
			t.Fatalf("EnsureTable again: %v", err)
		}
	}
	specs, err := db.Tables(t.Context())
	if err != nil || len(specs) != 1 {
		t.Fatalf("Tables() = %+v, %v; want one table", specs, err)
	}
	wantFamilies(t, "Tables()", specs[0].Families, stdSpec(stdTable).Families)
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(1), "v"))
}

func (s *suite) testAddFamily(t *testing.T) {
	db, tbl := s.table(t, storage.TableSpec{Name: "grow", Families: []storage.FamilySpec{{Name: "x"}}})
	mustPut(t, tbl, "r", cell("x", "q", ms(1), "old"))
	// A spec naming only the new family adds it and keeps the old one.
	if err := db.EnsureTable(t.Context(), storage.TableSpec{Name: "grow", Families: []storage.FamilySpec{{Name: "y", MaxVersions: 3}}}); err != nil {
		t.Fatalf("EnsureTable adding family: %v", err)
	}
	tbl, err := db.Table(t.Context(), "grow")
	if err != nil {
		t.Fatal(err)
	}
	wantFamilies(t, "Spec()", tbl.Spec().Families, []storage.FamilySpec{{Name: "x"}, {Name: "y", MaxVersions: 3}})
	mustPut(t, tbl, "r", cell("y", "q", ms(2), "new"))
	wantGet(t, tbl, "r", nil, rc("r", "x", "q", ms(1), "old"), rc("r", "y", "q", ms(2), "new"))
}

func (s *suite) testUpdateMaxVersions(t *testing.T) {
	spec := storage.TableSpec{Name: "mv", Families: []storage.FamilySpec{{Name: "f"}}}
	db, tbl := s.table(t, spec)
	mustPut(t, tbl, "r", cell("f", "q", ms(1), "1"), cell("f", "q", ms(2), "2"), cell("f", "q", ms(3), "3"))
	wantGet(t, tbl, "r", nil, rc("r", "f", "q", ms(3), "3"), rc("r", "f", "q", ms(2), "2"), rc("r", "f", "q", ms(1), "1"))
	spec.Families[0].MaxVersions = 1
	if err := db.EnsureTable(t.Context(), spec); err != nil {
		t.Fatalf("EnsureTable MaxVersions=1: %v", err)
	}
	tbl, err := db.Table(t.Context(), "mv")
	if err != nil {
		t.Fatal(err)
	}
	wantFamilies(t, "Spec()", tbl.Spec().Families, spec.Families)
	wantGet(t, tbl, "r", nil, rc("r", "f", "q", ms(3), "3"))
	wantScan(t, tbl, nil, rc("r", "f", "q", ms(3), "3"))
}

func (s *suite) testUpdateTTL(t *testing.T) {
	spec := storage.TableSpec{Name: "ttl_update", Families: []storage.FamilySpec{{Name: "f"}}}
	db, tbl := s.table(t, spec)
	old := s.nowMicros() - (2 * time.Hour).Microseconds()
	mustPut(t, tbl, "r", cell("f", "old", old, "o"), cell("f", "new", 0, "n"))
	if cells := mustGet(t, tbl, "r", nil); len(cells) != 2 {
		t.Fatalf("before TTL: Get = %s; want 2 cells", fmtCells(cells))
	}
	spec.Families[0].TTL = time.Hour
	if err := db.EnsureTable(t.Context(), spec); err != nil {
		t.Fatalf("EnsureTable TTL=1h: %v", err)
	}
	tbl, err := db.Table(t.Context(), spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	wantFamilies(t, "Spec()", tbl.Spec().Families, spec.Families)
	cells := mustGet(t, tbl, "r", nil)
	if len(cells) != 1 || string(cells[0].Qualifier) != "new" {
		t.Fatalf("after TTL=1h: Get = %s; want only the fresh cell", fmtCells(cells))
	}
}

func (s *suite) testMissingTable(t *testing.T) {
	db := s.open(t)
	_, err := db.Table(t.Context(), "no_such_table")
	wantErr(t, "Table(no_such_table)", err, storage.ErrNotFound)
	if !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("Table(no_such_table) error %q does not name the table", err)
	}
}

func (s *suite) testDropTable(t *testing.T) {
	db, tbl := s.table(t, stdSpec("doomed"))
	if err := db.EnsureTable(t.Context(), stdSpec("kept")); err != nil {
		t.Fatal(err)
	}
	kept, err := db.Table(t.Context(), "kept")
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "v"))
	mustPut(t, kept, "r", cell(famA, "q", ms(1), "k"))
	if err := db.DropTable(t.Context(), "doomed"); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	_, err = db.Table(t.Context(), "doomed")
	wantErr(t, "Table after DropTable", err, storage.ErrNotFound)
	wantErr(t, "DropTable twice", db.DropTable(t.Context(), "doomed"), storage.ErrNotFound)
	specs, err := db.Tables(t.Context())
	if err != nil || len(specs) != 1 || specs[0].Name != "kept" {
		t.Fatalf("Tables() after drop = %+v, %v; want only kept", specs, err)
	}
	wantGet(t, kept, "r", nil, rc("r", famA, "q", ms(1), "k"))
	// Recreated under the same name, the table starts empty.
	_, tbl = s.reopenTable(t, db, stdSpec("doomed"))
	wantGet(t, tbl, "r", nil)
	wantScan(t, tbl, nil)
}

func (s *suite) reopenTable(t *testing.T, db storage.DB, spec storage.TableSpec) (storage.DB, storage.Table) {
	t.Helper()
	if err := db.EnsureTable(t.Context(), spec); err != nil {
		t.Fatalf("EnsureTable(%s): %v", spec.Name, err)
	}
	tbl, err := db.Table(t.Context(), spec.Name)
	if err != nil {
		t.Fatalf("Table(%s): %v", spec.Name, err)
	}
	return db, tbl
}

func (s *suite) testListTables(t *testing.T) {
	db := s.open(t)
	specs, err := db.Tables(t.Context())
	if err != nil || len(specs) != 0 {
		t.Fatalf("Tables() on a fresh store = %+v, %v; want none", specs, err)
	}
	want := []storage.TableSpec{
		{Name: "A", Families: []storage.FamilySpec{{Name: "z"}, {Name: "m", TTL: 24 * time.Hour}}},
		{Name: "_x", Families: []storage.FamilySpec{{Name: "f", MaxVersions: 1}}},
		{Name: "t", Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: "t-1", Families: []storage.FamilySpec{{Name: "f", MaxVersions: 5, TTL: time.Minute}}},
		{Name: "t0", Families: []storage.FamilySpec{{Name: "b"}, {Name: "a"}}},
	}
	for _, i := range []int{3, 0, 4, 2, 1} {
		if err := db.EnsureTable(t.Context(), want[i]); err != nil {
			t.Fatalf("EnsureTable(%s): %v", want[i].Name, err)
		}
	}
	specs, err = db.Tables(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Families = sortFams(want[i].Families)
	}
	if fmt.Sprintf("%+v", specs) != fmt.Sprintf("%+v", want) {
		t.Fatalf("Tables() (tables and families in name order):\n got %+v\nwant %+v", specs, want)
	}
}

func (s *suite) testBadNames(t *testing.T) {
	db := s.open(t)
	long := strings.Repeat("x", 65)
	bad := []storage.TableSpec{
		{Name: "", Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: "a b", Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: "a/b", Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: "-a", Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: "é", Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: "a\x00", Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: long, Families: []storage.FamilySpec{{Name: "f"}}},
		{Name: "ok"},
		{Name: "ok", Families: []storage.FamilySpec{{Name: ""}}},
		{Name: "ok", Families: []storage.FamilySpec{{Name: "x y"}}},
		{Name: "ok", Families: []storage.FamilySpec{{Name: ".f"}}},
		{Name: "ok", Families: []storage.FamilySpec{{Name: "f:g"}}},
		{Name: "ok", Families: []storage.FamilySpec{{Name: "f"}, {Name: "f"}}},
		{Name: "ok", Families: []storage.FamilySpec{{Name: "f", MaxVersions: -1}}},
		{Name: "ok", Families: []storage.FamilySpec{{Name: "f", TTL: -time.Second}}},
	}
	for _, spec := range bad {
		what := fmt.Sprintf("EnsureTable(%+v)", spec)
		noPanic(t, what, func() { wantErr(t, what, db.EnsureTable(t.Context(), spec), storage.ErrInvalidArgument) })
	}
	specs, err := db.Tables(t.Context())
	if err != nil || len(specs) != 0 {
		t.Fatalf("Tables() after rejected specs = %+v, %v; want none", specs, err)
	}
	for _, name := range []string{"", "a b", long} {
		noPanic(t, "Table", func() {
			if _, err := db.Table(t.Context(), name); err == nil {
				t.Fatalf("Table(%q) succeeded", name)
			}
		})
		noPanic(t, "DropTable", func() {
			if err := db.DropTable(t.Context(), name); err == nil {
				t.Fatalf("DropTable(%q) succeeded", name)
			}
		})
	}
}

// testTableIsolation uses table names that prefix each other, which an
// engine keying tables by name prefix must keep apart.
func (s *suite) testTableIsolation(t *testing.T) {
	db := s.open(t)
	names := []string{"t", "t0", "t-", "t_", "T"}
	tbls := make([]storage.Table, len(names))
	for i, n := range names {
		_, tbls[i] = s.reopenTable(t, db, stdSpec(n))
		mustPut(t, tbls[i], "r", cell(famA, "q", ms(1), n))
		mustPut(t, tbls[i], "r"+n, cell(famA, "", ms(1), n))
	}
	for i, n := range names {
		wantScan(t, tbls[i], nil, rc("r", famA, "q", ms(1), n), rc("r"+n, famA, "", ms(1), n))
		wantScan(t, tbls[i], &storage.ScanOptions{Reverse: true}, rc("r"+n, famA, "", ms(1), n), rc("r", famA, "q", ms(1), n))
	}
	if err := tbls[0].DeleteRange(t.Context(), nil, nil); err != nil {
		t.Fatalf("DeleteRange(nil, nil): %v", err)
	}
	wantScan(t, tbls[0], nil)
	for i, n := range names[1:] {
		if _, err := scanAll(t.Context(), tbls[i+1], nil); err != nil {
			t.Fatal(err)
		}
		wantGet(t, tbls[i+1], "r", nil, rc("r", famA, "q", ms(1), n))
	}
	if err := db.DropTable(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	wantGet(t, tbls[1], "r", nil, rc("r", famA, "q", ms(1), "t0"))
}
