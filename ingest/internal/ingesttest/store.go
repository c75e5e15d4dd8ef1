package ingesttest

import (
	"context"
	"errors"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// Store is a real engine with a data table (schema.DefaultDataTable,
// family "t", one version, as cmd/tsd creates it) and a meta table
// ("tsdb-meta").
type Store struct {
	DB   storage.DB
	Tbl  storage.Table
	Meta storage.Table
}

// NewStore creates the tables in db, the result of opening an engine
// (err, if not nil, fails the test).
func NewStore(t testing.TB, db storage.DB, err error) *Store {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, spec := range []storage.TableSpec{
		schema.DataTableSpec(schema.DefaultDataTable),
		schema.MetaTableSpec("tsdb-meta"),
	} {
		if err := db.EnsureTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := db.Table(ctx, "tsdb")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := db.Table(ctx, "tsdb-meta")
	if err != nil {
		t.Fatal(err)
	}
	return &Store{DB: db, Tbl: tbl, Meta: meta}
}

// Points reads the row of key at base back through rowkey's row decoder,
// and counts its columns.
func (s *Store) Points(t testing.TB, key []byte, base int64) ([]series.Point, int) {
	t.Helper()
	cells := s.Cells(t, key, base)
	if len(cells) == 0 {
		return nil, 0
	}
	var d rowkey.RowDecoder
	pts, err := d.Decode(nil, base/1000, cells)
	if err != nil {
		t.Fatalf("decode row of %x at %d: %v", key, base, err)
	}
	return pts, len(cells)
}

// Cells reads the cells of the data row of key at base (none when the
// row is absent).
func (s *Store) Cells(t testing.TB, key []byte, base int64) []storage.Cell {
	t.Helper()
	l := rowkey.DefaultLayout()
	row, err := l.AppendRowKeyFromTSUID(nil, key, base)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Tbl.Get(context.Background(), row, nil)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cells
}
