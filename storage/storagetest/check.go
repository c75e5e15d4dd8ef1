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
	tbls, err := storage.EnsureTables(t.Context(), db, spec)
	if err != nil {
		t.Fatal(err)
	}
	return db, tbls[0]
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
	wantGetAppend(t, tbl, row, o, want...)
}

// wantGetAppend checks that GetAppend returns what Get does, appended to a
// nil dst and buf, to ones holding a cell with no room to spare (so buf must
// grow) and to ones with room (so it must not), and that ErrNotFound leaves
// dst and buf as they were.
func wantGetAppend(t *testing.T, tbl storage.Table, row string, o *storage.ReadOptions, want ...storage.Cell) {
	t.Helper()
	for _, room := range []int{-1, 0, 64 << 10} {
		var dst []storage.Cell
		var buf []byte
		if room >= 0 {
			dst, buf = sentinel(room)
		}
		what := fmt.Sprintf("GetAppend(%d cells, %d/%d bytes, %q, %s)", len(dst), len(buf), cap(buf), row, fmtRead(o))
		got, gotBuf, err := tbl.GetAppend(t.Context(), dst, buf, []byte(row), o)
		if len(want) == 0 {
			wantErr(t, what, err, storage.ErrNotFound)
			wantUnchanged(t, what, got, gotBuf, len(dst), len(buf))
			if room >= 0 {
				wantSentinel(t, what, got, gotBuf)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wantAppended(t, what, got, gotBuf, len(dst), len(buf), want)
	}
}

// sentinel returns a dst holding one cell whose bytes fill buf, with room
// spare bytes of capacity after them.
func sentinel(room int) ([]storage.Cell, []byte) {
	buf := make([]byte, 0, 8+room)
	buf = append(buf, "SrowSqSv"...)
	return []storage.Cell{{Row: buf[:4:4], Family: "s", Qualifier: buf[4:6:6], Timestamp: 7, Value: buf[6:8:8]}}, buf[:8]
}

// wantUnchanged checks that a call that failed gave dst and buf back with
// the lengths it was given.
func wantUnchanged(t *testing.T, what string, dst []storage.Cell, buf []byte, nDst, nBuf int) {
	t.Helper()
	if len(dst) != nDst || len(buf) != nBuf {
		t.Fatalf("%s failed but returned %d cells and %d bytes; want the %d and %d it was given", what, len(dst), len(buf), nDst, nBuf)
	}
}

// wantSentinel checks that dst and buf start with sentinel's cell and bytes.
func wantSentinel(t *testing.T, what string, dst []storage.Cell, buf []byte) {
	t.Helper()
	s, _ := sentinel(0)
	wantCells(t, what+": the cell given in dst", dst[:min(1, len(dst))], s)
	if string(buf[:min(8, len(buf))]) != "SrowSqSv" {
		t.Fatalf("%s: buf given as %q came back as %q", what, "SrowSqSv", buf)
	}
}

// wantAppended checks a GetAppend result: the nDst cells given are intact,
// the cells after them are want, each capped at its own bytes, and those
// bytes lie in buf after the nBuf given (overwriting that part of buf
// changes every appended cell and nothing else).
func wantAppended(t *testing.T, what string, dst []storage.Cell, buf []byte, nDst, nBuf int, want []storage.Cell) {
	t.Helper()
	if len(dst) < nDst || len(buf) < nBuf {
		t.Fatalf("%s shrank dst or buf to %d cells, %d bytes", what, len(dst), len(buf))
	}
	given, got := dst[:nDst], dst[nDst:]
	wantCells(t, what, got, want)
	for _, c := range got {
		if cap(c.Qualifier) != len(c.Qualifier) || cap(c.Value) != len(c.Value) {
			t.Fatalf("%s: cell %s has qualifier cap %d, value cap %d: appending to it would overwrite its neighbour",
				what, fmtCell(c), cap(c.Qualifier), cap(c.Value))
		}
	}
	for i := nBuf; i < len(buf); i++ {
		buf[i] = 'Z'
	}
	for _, c := range got {
		for _, b := range [][]byte{c.Row, c.Qualifier, c.Value} {
			if len(b) > 0 && string(b) != strings.Repeat("Z", len(b)) {
				t.Fatalf("%s: cell %s does not point into the returned buf", what, fmtCell(c))
			}
		}
	}
	if nDst > 0 {
		s, _ := sentinel(0)
		wantCells(t, what+": the cell given in dst", given, s)
	}
}

// scanAll drains a scan as scanRows does and returns the rows' cells.
func scanAll(ctx context.Context, tbl storage.Table, o *storage.ScanOptions) ([]storage.Cell, error) {
	rows, err := scanRows(ctx, tbl, o)
	return flatten(rows), err
}

// scanRows drains a scan (drainRows), checks the rows' shape (checkRows)
// and returns Close's error, or the shape's.
func scanRows(ctx context.Context, tbl storage.Table, o *storage.ScanOptions) ([]storage.Row, error) {
	rows, err := drainRows(ctx, tbl, o)
	if msg := checkRows(rows, o, err == nil); msg != "" {
		return rows, fmt.Errorf("rows break the contract: %s\n%s", msg, fmtRows(rows))
	}
	return rows, err
}

// drainRows drains a scan, copying every row, and returns Close's error.
func drainRows(ctx context.Context, tbl storage.Table, o *storage.ScanOptions) ([]storage.Row, error) {
	sc := tbl.Scan(ctx, o)
	var out []storage.Row
	for sc.Next() {
		out = append(out, copyRow(sc.Row()))
	}
	err := sc.Err()
	if cerr := sc.Close(); !sameErr(err, cerr) {
		return out, fmt.Errorf("scanner Err %v but Close %v", err, cerr)
	}
	return out, err
}

// checkRows checks what the contract says of a scan's rows whatever the
// data: each has a key and at least one cell, every cell's row is the key,
// keys ascend (descend in reverse) from row to row and repeat only after a
// Partial batch, a finished scan does not end Partial, and a row is cut
// exactly at the batch bound: a batch of two or more cells fits in it, and
// a Partial batch could not take the next cell of its row. It returns ""
// or what is wrong.
func checkRows(rows []storage.Row, o *storage.ScanOptions, finished bool) string {
	var so storage.ScanOptions
	if o != nil {
		so = *o
	}
	limit := so.BatchLimit()
	for i, r := range rows {
		if len(r.Key) == 0 || len(r.Cells) == 0 {
			return fmt.Sprintf("row %d: key %q with %d cells", i, r.Key, len(r.Cells))
		}
		size := 0
		for _, c := range r.Cells {
			if !bytes.Equal(c.Row, r.Key) {
				return fmt.Sprintf("row %d of key %q holds a cell of row %q", i, r.Key, c.Row)
			}
			size += storage.CellBytes(&c)
		}
		if len(r.Cells) > 1 && size > limit {
			return fmt.Sprintf("row %d of key %q: %d cells of %d bytes exceed the bound %d", i, r.Key, len(r.Cells), size, limit)
		}
		if i == 0 {
			continue
		}
		prev := rows[i-1]
		if msg := checkNext(prev, r, so.Reverse, limit); msg != "" {
			return fmt.Sprintf("rows %d and %d: %s", i-1, i, msg)
		}
	}
	if n := len(rows); finished && n > 0 && rows[n-1].Partial {
		return fmt.Sprintf("the scan ended on a Partial batch of row %q", rows[n-1].Key)
	}
	return ""
}

// checkNext checks the order of two successive rows and, when the first is
// Partial, that the second continues it and that the cut was needed.
func checkNext(prev, r storage.Row, reverse bool, limit int) string {
	c := bytes.Compare(prev.Key, r.Key)
	if reverse {
		c = -c
	}
	switch {
	case prev.Partial && c != 0:
		return fmt.Sprintf("a Partial batch of row %q is followed by row %q", prev.Key, r.Key)
	case !prev.Partial && c >= 0:
		return fmt.Sprintf("row %q is followed by row %q (reverse %v) without a Partial mark", prev.Key, r.Key, reverse)
	case prev.Partial:
		size := storage.CellBytes(&r.Cells[0])
		for _, c := range prev.Cells {
			size += storage.CellBytes(&c)
		}
		if size <= limit {
			return fmt.Sprintf("row %q was cut after %d cells though the next cell fit in the bound %d", r.Key, len(prev.Cells), limit)
		}
	}
	return ""
}

// sameRows reports whether got and want agree in keys, Partial marks and
// cells (under eq).
func sameRows(got, want []storage.Row, eq func(a, b storage.Cell) bool) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !bytes.Equal(got[i].Key, want[i].Key) || got[i].Partial != want[i].Partial ||
			diffCells(got[i].Cells, want[i].Cells, eq) != "" {
			return false
		}
	}
	return true
}

func flatten(rows []storage.Row) []storage.Cell {
	var out []storage.Cell
	for _, r := range rows {
		out = append(out, r.Cells...)
	}
	return out
}

// copyRow copies a scanned row out of the scanner's memory.
func copyRow(r storage.Row) storage.Row {
	out := storage.Row{Key: bytes.Clone(r.Key), Partial: r.Partial, Cells: make([]storage.Cell, len(r.Cells))}
	for i, c := range r.Cells {
		out.Cells[i] = copyCell(c)
	}
	return out
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

// wantScanRows checks that a scan yields exactly want: keys, cells and
// Partial marks.
func wantScanRows(t *testing.T, tbl storage.Table, o *storage.ScanOptions, want ...storage.Row) {
	t.Helper()
	got, err := scanRows(t.Context(), tbl, o)
	if err != nil {
		t.Fatalf("Scan(%s): %v", fmtScan(o), err)
	}
	if !sameRows(got, want, cellEqual) {
		t.Fatalf("Scan(%s):\n got %d rows:\n%s want %d rows:\n%s", fmtScan(o), len(got), fmtRows(got), len(want), fmtRows(want))
	}
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

func fmtRows(rows []storage.Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "   row %q partial=%v:\n", r.Key, r.Partial)
		for _, c := range r.Cells {
			b.WriteString("      " + fmtCell(c) + "\n")
		}
	}
	return b.String()
}

func fmtScan(o *storage.ScanOptions) string {
	if o == nil {
		return "nil"
	}
	return fmt.Sprintf("start=%q stop=%q re=%q limit=%d rev=%v batch=%d %s",
		o.Start, o.Stop, o.RowRegex, o.Limit, o.Reverse, o.MaxBatchBytes, fmtRead(&o.ReadOptions))
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
