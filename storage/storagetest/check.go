package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// The standard table: one family per behaviour the tests need.
const (
	stdTable = "t"
	famA     = "a"   // keeps every version
	famB     = "b"   // keeps 2 versions
	famC     = "c"   // keeps 1 version: counters, appends, zero timestamps
	famTTL   = "ttl" // cells live one hour
)

func stdSpec(name string) storage.TableSpec {
	return storage.TableSpec{Name: name, Families: []storage.FamilySpec{
		{Name: famA},
		{Name: famB, MaxVersions: 2},
		{Name: famC, MaxVersions: 1},
		{Name: famTTL, TTL: time.Hour},
	}}
}

// ms converts milliseconds to a contract timestamp (microseconds).
func ms(n int64) int64 { return n * 1000 }

// table opens a fresh store holding spec and returns both.
func (s *suite) table(t *testing.T, spec storage.TableSpec) (storage.DB, storage.Table) {
	t.Helper()
	db := s.open(t)
	if err := db.EnsureTable(t.Context(), spec); err != nil {
		t.Fatalf("EnsureTable(%s): %v", spec.Name, err)
	}
	tbl, err := db.Table(t.Context(), spec.Name)
	if err != nil {
		t.Fatalf("Table(%s): %v", spec.Name, err)
	}
	return db, tbl
}

// std opens a fresh store with the standard table.
func (s *suite) std(t *testing.T) storage.Table {
	t.Helper()
	_, tbl := s.table(t, stdSpec(stdTable))
	return tbl
}

// nowMicros is the engine clock at millisecond granularity.
func (s *suite) nowMicros() int64 {
	us := s.opts.Now().UnixMicro()
	return us - us%1000
}

// cell builds a cell; the row is filled in by reads only.
func cell(fam, qual string, ts int64, value string) storage.Cell {
	return storage.Cell{Family: fam, Qualifier: []byte(qual), Timestamp: ts, Value: []byte(value)}
}

// rc is a cell as read back from row.
func rc(row, fam, qual string, ts int64, value string) storage.Cell {
	c := cell(fam, qual, ts, value)
	c.Row = []byte(row)
	return c
}

func mustPut(t *testing.T, tbl storage.Table, row string, cells ...storage.Cell) {
	t.Helper()
	if err := tbl.Put(t.Context(), []byte(row), cells); err != nil {
		t.Fatalf("Put(%q): %v", row, err)
	}
}

func mustGet(t *testing.T, tbl storage.Table, row string, o *storage.ReadOptions) []storage.Cell {
	t.Helper()
	cells, err := tbl.Get(t.Context(), []byte(row), o)
	if err != nil {
		t.Fatalf("Get(%q, %+v): %v", row, o, err)
	}
	return cells
}

// wantGet checks that Get returns exactly want, or ErrNotFound when want is
// empty.
func wantGet(t *testing.T, tbl storage.Table, row string, o *storage.ReadOptions, want ...storage.Cell) {
	t.Helper()
	cells, err := tbl.Get(t.Context(), []byte(row), o)
	if len(want) == 0 {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Get(%q, %+v) = %s, %v; want ErrNotFound", row, o, fmtCells(cells), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Get(%q, %+v): %v", row, o, err)
	}
	wantCells(t, fmt.Sprintf("Get(%q, %+v)", row, o), cells, want)
}

// scanAll drains a scan, copying every cell, and returns Close's error.
func scanAll(ctx context.Context, tbl storage.Table, o *storage.ScanOptions) ([]storage.Cell, error) {
	sc := tbl.Scan(ctx, o)
	var out []storage.Cell
	for sc.Next() {
		out = append(out, copyCell(sc.Cell()))
	}
	err := sc.Err()
	if cerr := sc.Close(); !sameErr(err, cerr) {
		return out, fmt.Errorf("scanner Err %v but Close %v", err, cerr)
	}
	return out, err
}

func sameErr(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
}

func wantScan(t *testing.T, tbl storage.Table, o *storage.ScanOptions, want ...storage.Cell) {
	t.Helper()
	cells, err := scanAll(t.Context(), tbl, o)
	if err != nil {
		t.Fatalf("Scan(%s): %v", fmtScan(o), err)
	}
	wantCells(t, "Scan("+fmtScan(o)+")", cells, want)
}

// wantRows checks the row keys (in order, each once) a scan returns.
func wantRows(t *testing.T, tbl storage.Table, o *storage.ScanOptions, want ...string) {
	t.Helper()
	cells, err := scanAll(t.Context(), tbl, o)
	if err != nil {
		t.Fatalf("Scan(%s): %v", fmtScan(o), err)
	}
	got := rowsOf(cells)
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("Scan(%s) rows:\n got %q\nwant %q", fmtScan(o), got, want)
	}
}

func rowsOf(cells []storage.Cell) []string {
	var rows []string
	for _, c := range cells {
		if len(rows) == 0 || rows[len(rows)-1] != string(c.Row) {
			rows = append(rows, string(c.Row))
		}
	}
	return rows
}

func copyCell(c storage.Cell) storage.Cell {
	c.Row = bytes.Clone(c.Row)
	c.Qualifier = bytes.Clone(c.Qualifier)
	c.Value = bytes.Clone(c.Value)
	return c
}

func cellEqual(a, b storage.Cell) bool {
	return bytes.Equal(a.Row, b.Row) && a.Family == b.Family && bytes.Equal(a.Qualifier, b.Qualifier) &&
		a.Timestamp == b.Timestamp && bytes.Equal(a.Value, b.Value)
}

func wantCells(t *testing.T, what string, got, want []storage.Cell) {
	t.Helper()
	if d := diffCells(got, want, cellEqual); d != "" {
		t.Fatalf("%s:\n%s", what, d)
	}
}

// diffCells returns "" when got and want agree under eq, else both lists.
func diffCells(got, want []storage.Cell, eq func(a, b storage.Cell) bool) string {
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		same = eq(got[i], want[i])
	}
	if same {
		return ""
	}
	return fmt.Sprintf(" got %d cells:\n%s want %d cells:\n%s", len(got), fmtCells(got), len(want), fmtCells(want))
}

func fmtCell(c storage.Cell) string {
	return fmt.Sprintf("%q %s:%q @%d = %q", c.Row, c.Family, c.Qualifier, c.Timestamp, c.Value)
}

func fmtCells(cells []storage.Cell) string {
	var b strings.Builder
	for _, c := range cells {
		b.WriteString("   " + fmtCell(c) + "\n")
	}
	return b.String()
}

func fmtScan(o *storage.ScanOptions) string {
	if o == nil {
		return "nil"
	}
	return fmt.Sprintf("start=%q stop=%q re=%q limit=%d rev=%v %s",
		o.Start, o.Stop, o.RowRegex, o.Limit, o.Reverse, fmtRead(&o.ReadOptions))
}

func fmtRead(o *storage.ReadOptions) string {
	if o == nil {
		return "{}"
	}
	return fmt.Sprintf("{fams=%q quals=%q prefix=%q qrange=[%q,%q) time=[%d,%d) maxv=%d}",
		o.Families, o.Qualifiers, o.QualifierPrefix, o.QualifierStart, o.QualifierStop,
		o.MinTime, o.MaxTime, o.MaxVersions)
}

// wantErr fails unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// wantBadFamily fails unless err rejects an unknown family by name, as
// ErrNotFound or ErrInvalidArgument (the contract names both classes).
func wantBadFamily(t *testing.T, what string, err error, family string) {
	t.Helper()
	if !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("%s: got error %v, want ErrNotFound or ErrInvalidArgument", what, err)
	}
	if !strings.Contains(err.Error(), family) {
		t.Fatalf("%s: error %q does not name family %q", what, err, family)
	}
}

// isCanceled reports whether err says the context was done.
func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// noPanic runs fn and turns a panic into a test failure naming what.
func noPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked: %v", what, r)
		}
	}()
	fn()
}
