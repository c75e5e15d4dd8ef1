package storagetest

import (
	"testing"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) applyCases() []testCase {
	return []testCase{
		{"MultiRow", s.testApplyMultiRow},
		{"DeletesThenPuts", s.testApplyDeletesThenPuts},
		{"Empty", s.testApplyEmpty},
		{"BadRow", s.testApplyBadRow},
		{"Group", s.testApplyGroup},
		{"GroupWrapped", s.testApplyGroupWrapped},
		{"GroupBadRow", s.testApplyGroupBadRow},
	}
}

// twoTables opens a fresh store with the standard table and a second one.
func (s *suite) twoTables(t *testing.T) (storage.Table, storage.Table) {
	t.Helper()
	db := s.open(t)
	tbls, err := storage.EnsureTables(t.Context(), db, stdSpec(stdTable), stdSpec("u"))
	if err != nil {
		t.Fatal(err)
	}
	return tbls[0], tbls[1]
}

// testApplyGroup writes to two tables of one store through
// storage.ApplyGroup: each table gets its own rows, deletes before puts.
func (s *suite) testApplyGroup(t *testing.T) {
	a, b := s.twoTables(t)
	fillRow(t, b, "r1")
	err := storage.ApplyGroup(t.Context(), []storage.TableMutations{
		{Table: a, Muts: []storage.Mutation{
			{Row: []byte("r1"), Cells: []storage.Cell{cell(famA, "q", ms(1), "a1")}},
			{Row: []byte("r2"), Cells: []storage.Cell{cell(famB, "q", ms(2), "a2")}},
		}},
		{Table: b, Muts: []storage.Mutation{
			{Row: []byte("r1"), Deletes: []storage.Deletion{{Kind: storage.DeleteRow}},
				Cells: []storage.Cell{cell(famA, "q", ms(3), "b1")}},
		}},
		{Table: a}, // nothing
	})
	if err != nil {
		t.Fatalf("ApplyGroup: %v", err)
	}
	wantScan(t, a, nil, rc("r1", famA, "q", ms(1), "a1"), rc("r2", famB, "q", ms(2), "a2"))
	wantScan(t, b, nil, rc("r1", famA, "q", ms(3), "b1"))
}

// wrapped is a Table of another implementation than the engine's (a test
// hook, a metering wrapper): ApplyGroup writes through its Apply.
type wrapped struct{ storage.Table }

func (s *suite) testApplyGroupWrapped(t *testing.T) {
	a, b := s.twoTables(t)
	err := storage.ApplyGroup(t.Context(), []storage.TableMutations{
		{Table: a, Muts: []storage.Mutation{{Row: []byte("r"), Cells: []storage.Cell{cell(famA, "q", ms(1), "a")}}}},
		{Table: wrapped{b}, Muts: []storage.Mutation{{Row: []byte("r"), Cells: []storage.Cell{cell(famA, "q", ms(1), "b")}}}},
	})
	if err != nil {
		t.Fatalf("ApplyGroup: %v", err)
	}
	wantScan(t, a, nil, rc("r", famA, "q", ms(1), "a"))
	wantScan(t, b, nil, rc("r", famA, "q", ms(1), "b"))
}

// testApplyGroupBadRow: an empty row in the second table's mutations is
// ErrInvalidArgument; the first table's rows may or may not be written
// (one commit writes none), nothing else is.
func (s *suite) testApplyGroupBadRow(t *testing.T) {
	a, b := s.twoTables(t)
	noPanic(t, "ApplyGroup", func() {
		err := storage.ApplyGroup(t.Context(), []storage.TableMutations{
			{Table: a, Muts: []storage.Mutation{{Row: []byte("ok"), Cells: []storage.Cell{cell(famA, "q", ms(1), "v")}}}},
			{Table: b, Muts: []storage.Mutation{{Row: nil, Cells: []storage.Cell{cell(famA, "q", ms(1), "v")}}}},
		})
		wantErr(t, "ApplyGroup with an empty row", err, storage.ErrInvalidArgument)
	})
	for _, tbl := range []storage.Table{a, b} {
		cells, err := scanAll(t.Context(), tbl, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			if tbl != a || string(c.Row) != "ok" {
				t.Fatalf("unexpected cell after failed ApplyGroup: %s", fmtCell(c))
			}
		}
	}
}

func (s *suite) testApplyMultiRow(t *testing.T) {
	tbl := s.std(t)
	muts := []storage.Mutation{
		{Row: []byte("r2"), Cells: []storage.Cell{cell(famA, "q", ms(1), "2"), cell(famB, "q", ms(1), "2b")}},
		{Row: []byte("r1"), Cells: []storage.Cell{{Row: []byte("ignored"), Family: famA, Qualifier: []byte("q"), Timestamp: ms(1), Value: []byte("1")}}},
		{Row: []byte("r\x00"), Cells: []storage.Cell{cell(famA, "", ms(1), "0")}},
	}
	if err := tbl.Apply(t.Context(), muts); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	wantScan(t, tbl, nil,
		rc("r\x00", famA, "", ms(1), "0"),
		rc("r1", famA, "q", ms(1), "1"),
		rc("r2", famA, "q", ms(1), "2"), rc("r2", famB, "q", ms(1), "2b"))
	wantGet(t, tbl, "ignored", nil)
}

func (s *suite) testApplyDeletesThenPuts(t *testing.T) {
	tbl := s.std(t)
	fillRow(t, tbl, "r1")
	fillRow(t, tbl, "r2")
	fillRow(t, tbl, "r3")
	muts := []storage.Mutation{
		{Row: []byte("r1"), Deletes: []storage.Deletion{{Kind: storage.DeleteRow}},
			Cells: []storage.Cell{cell(famA, "q", ms(1), "fresh")}},
		{Row: []byte("r2"), Deletes: []storage.Deletion{{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q")}},
			Cells: []storage.Cell{cell(famA, "q", ms(2), "again")}},
		{Row: []byte("r3"), Deletes: []storage.Deletion{{Kind: storage.DeleteFamily, Family: famB}}},
	}
	if err := tbl.Apply(t.Context(), muts); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	wantGet(t, tbl, "r1", nil, rc("r1", famA, "q", ms(1), "fresh"))
	f := filled("r2")
	wantGet(t, tbl, "r2", nil, f[0], f[1], rc("r2", famA, "q", ms(2), "again"), f[4], f[5])
	wantGet(t, tbl, "r3", nil, filled("r3")[:4]...)
}

func (s *suite) testApplyEmpty(t *testing.T) {
	tbl := s.std(t)
	if err := tbl.Apply(t.Context(), nil); err != nil {
		t.Fatalf("Apply(nil): %v", err)
	}
	if err := tbl.Apply(t.Context(), []storage.Mutation{{Row: []byte("r")}}); err != nil {
		t.Fatalf("Apply of a mutation with nothing in it: %v", err)
	}
	wantScan(t, tbl, nil)
}

func (s *suite) testApplyBadRow(t *testing.T) {
	tbl := s.std(t)
	for _, row := range [][]byte{nil, {}} {
		noPanic(t, "Apply", func() {
			err := tbl.Apply(t.Context(), []storage.Mutation{
				{Row: []byte("ok"), Cells: []storage.Cell{cell(famA, "q", ms(1), "v")}},
				{Row: row, Cells: []storage.Cell{cell(famA, "q", ms(1), "v")}},
			})
			wantErr(t, "Apply with an empty row", err, storage.ErrInvalidArgument)
		})
	}
	// The batch is not atomic: "ok" may or may not be there, nothing else is.
	cells, err := scanAll(t.Context(), tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if string(c.Row) != "ok" {
			t.Fatalf("unexpected cell after failed Apply: %s", fmtCell(c))
		}
	}
}
