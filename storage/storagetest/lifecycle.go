package storagetest

import (
	"context"
	"errors"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) lifecycleCases() []testCase {
	return []testCase{
		{"ClosedDB", s.testClosed},
		{"CanceledContext", s.testCanceled},
	}
}

// tableCalls invokes every Table method once on a row holding a counter.
func tableCalls(ctx context.Context, tbl storage.Table) map[string]error {
	row := []byte("r")
	cells := []storage.Cell{cell(famA, "q", ms(2), "v")}
	out := make(map[string]error)
	_, out["Get"] = tbl.Get(ctx, row, nil)
	_, _, out["GetAppend"] = tbl.GetAppend(ctx, nil, nil, row, nil)
	_, out["Scan"] = scanAll(ctx, tbl, nil)
	out["Put"] = tbl.Put(ctx, row, cells)
	out["Apply"] = tbl.Apply(ctx, []storage.Mutation{{Row: row, Cells: cells}})
	out["Delete"] = tbl.Delete(ctx, row)
	out["DeleteRange"] = tbl.DeleteRange(ctx, nil, nil)
	_, out["Increment"] = tbl.Increment(ctx, row, famC, []byte("n"), 1)
	out["CheckAndPut"] = tbl.CheckAndPut(ctx, row, famA, []byte("x"), nil, cells)
	_, out["Append"] = tbl.Append(ctx, row, famA, []byte("q"), []byte("x"))
	return out
}

// dbCalls invokes every DB method but Close once.
func dbCalls(ctx context.Context, db storage.DB) map[string]error {
	out := make(map[string]error)
	out["EnsureTable"] = db.EnsureTable(ctx, stdSpec("other"))
	_, out["Table"] = db.Table(ctx, stdTable)
	_, out["Tables"] = db.Tables(ctx)
	out["DropTable"] = db.DropTable(ctx, stdTable)
	return out
}

func (s *suite) seedCounter(t *testing.T, tbl storage.Table) {
	t.Helper()
	mustPut(t, tbl, "r", storage.Cell{Family: famC, Qualifier: []byte("n"), Timestamp: ms(1), Value: be64(1)}, cell(famA, "q", ms(1), "v"))
}

func (s *suite) testClosed(t *testing.T) {
	db, tbl := s.table(t, stdSpec(stdTable))
	s.seedCounter(t, tbl)
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := t.Context()
	for name, err := range tableCalls(ctx, tbl) {
		wantErr(t, "Table."+name+" after Close", err, storage.ErrClosed)
	}
	for name, err := range dbCalls(ctx, db) {
		wantErr(t, "DB."+name+" after Close", err, storage.ErrClosed)
	}
	if err := db.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("second Close = %v; want nil or ErrClosed", err)
	}
}

// testCanceled checks that a done context stops every call with an error
// saying so, and that the store still works afterwards.
func (s *suite) testCanceled(t *testing.T) {
	db, tbl := s.table(t, stdSpec(stdTable))
	s.seedCounter(t, tbl)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, err := range tableCalls(ctx, tbl) {
		if !isCanceled(err) {
			t.Errorf("Table.%s with a cancelled context = %v; want an error wrapping context.Canceled", name, err)
		}
	}
	for name, err := range dbCalls(ctx, db) {
		if !isCanceled(err) {
			t.Errorf("DB.%s with a cancelled context = %v; want an error wrapping context.Canceled", name, err)
		}
	}
	if _, err := db.Table(t.Context(), stdTable); err != nil {
		t.Fatalf("Table after cancelled calls: %v", err)
	}
	if _, err := tbl.Get(t.Context(), []byte("r"), nil); err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get after cancelled calls: %v", err)
	}
}
