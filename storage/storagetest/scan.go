package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) scanCases() []testCase {
	return []testCase{
		{"All", s.testScanAll},
		{"EmptyTable", s.testScanEmpty},
		{"Bounds", s.testScanBounds},
		{"Limit", s.testScanLimit},
		{"Reverse", s.testScanReverse},
		{"RegexFullMatch", s.testRegexFullMatch},
		{"RegexInvalid", s.testRegexInvalid},
		{"Filters", s.testScanFilters},
		{"EmptyQualifiers", s.testScanEmptyQualifiers},
		{"BinaryKeys", s.testScanBinaryKeys},
		{"ManyRows", s.testScanManyRows},
		{"ScannerSticky", s.testScannerSticky},
		{"ContextCancel", s.testScanCancel},
		{"RowShape", s.testScanRowShape},
		{"BatchBound", s.testScanBatchBound},
		{"BatchBoundLimit", s.testScanBatchLimit},
		{"BatchBoundDefault", s.testScanBatchDefault},
		{"BatchBoundInvalid", s.testScanBatchInvalid},
	}
}

// putScanRows writes one cell in families a and c for each row, in reverse.
func putScanRows(t *testing.T, tbl storage.Table, rows ...string) {
	t.Helper()
	for i := len(rows) - 1; i >= 0; i-- {
		mustPut(t, tbl, rows[i], cell(famC, "z", ms(1), rows[i]), cell(famA, "q", ms(1), rows[i]))
	}
}

func scanRowCells(rows ...string) []storage.Cell {
	var out []storage.Cell
	for _, r := range rows {
		out = append(out, rc(r, famA, "q", ms(1), r), rc(r, famC, "z", ms(1), r))
	}
	return out
}

func (s *suite) testScanAll(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r2", cell(famTTL, "t", 0, "fresh"), cell(famB, "b", ms(3), "b3"), cell(famB, "b", ms(4), "b4"))
	mustPut(t, tbl, "r1", cell(famC, "c", ms(1), "c"), cell(famA, "a2", ms(1), "a2"), cell(famA, "a1", ms(2), "a1"))
	cells, err := scanAll(t.Context(), tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 6 {
		t.Fatalf("Scan(nil) = %s; want 6 cells", fmtCells(cells))
	}
	ts := cells[5].Timestamp // the engine clock stamped it
	wantCells(t, "Scan(nil)", cells, []storage.Cell{
		rc("r1", famA, "a1", ms(2), "a1"), rc("r1", famA, "a2", ms(1), "a2"), rc("r1", famC, "c", ms(1), "c"),
		rc("r2", famB, "b", ms(4), "b4"), rc("r2", famB, "b", ms(3), "b3"), rc("r2", famTTL, "t", ts, "fresh"),
	})
}

func (s *suite) testScanEmpty(t *testing.T) {
	tbl := s.std(t)
	wantScan(t, tbl, nil)
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true, Limit: 3, RowRegex: ".*"})
}

func (s *suite) testScanBounds(t *testing.T) {
	tbl := s.std(t)
	rows := []string{"a", "b", "b\x00", "c", "d"}
	putScanRows(t, tbl, rows...)
	o := func(start, stop string) *storage.ScanOptions {
		so := &storage.ScanOptions{}
		if start != "-" {
			so.Start = []byte(start)
		}
		if stop != "-" {
			so.Stop = []byte(stop)
		}
		return so
	}
	wantScan(t, tbl, o("b", "c"), scanRowCells("b", "b\x00")...)
	wantScan(t, tbl, o("-", "b\x00"), scanRowCells("a", "b")...)
	wantScan(t, tbl, o("b\x00", "-"), scanRowCells("b\x00", "c", "d")...)
	wantScan(t, tbl, o("-", "-"), scanRowCells(rows...)...)
	wantScan(t, tbl, o("a\xff", "c\x00"), scanRowCells("b", "b\x00", "c")...)
	wantScan(t, tbl, o("c", "c"))
	wantScan(t, tbl, o("e", "-"))
	wantScan(t, tbl, o("-", "a"))
}

func (s *suite) testScanLimit(t *testing.T) {
	tbl := s.std(t)
	rows := []string{"a", "b", "c", "d"}
	putScanRows(t, tbl, rows...)
	mustPut(t, tbl, "bb", cell(famB, "x", ms(1), "only b"))
	wantScan(t, tbl, &storage.ScanOptions{Limit: 2}, scanRowCells("a", "b")...)
	wantScan(t, tbl, &storage.ScanOptions{Limit: 10}, append(append(scanRowCells("a", "b"), rc("bb", famB, "x", ms(1), "only b")), scanRowCells("c", "d")...)...)
	wantScan(t, tbl, &storage.ScanOptions{Limit: 1, Start: []byte("b\x00")}, rc("bb", famB, "x", ms(1), "only b"))
	// Rows the filters empty do not count towards the limit.
	wantScan(t, tbl, &storage.ScanOptions{Limit: 2, Start: []byte("b"), ReadOptions: storage.ReadOptions{Families: []string{famA}}},
		rc("b", famA, "q", ms(1), "b"), rc("c", famA, "q", ms(1), "c"))
	wantScan(t, tbl, &storage.ScanOptions{Limit: 2, RowRegex: "[bd]"}, scanRowCells("b", "d")...)
}

func (s *suite) testScanReverse(t *testing.T) {
	tbl := s.std(t)
	rows := []string{"a", "b", "b\x00", "c", "d"}
	putScanRows(t, tbl, rows...)
	mustPut(t, tbl, "b", cell(famA, "q", ms(2), "b2"), cell(famA, "p", ms(1), "bp"))
	b := []storage.Cell{rc("b", famA, "p", ms(1), "bp"), rc("b", famA, "q", ms(2), "b2"), rc("b", famA, "q", ms(1), "b"), rc("b", famC, "z", ms(1), "b")}
	all := slices.Concat(scanRowCells("d", "c", "b\x00"), b, scanRowCells("a"))
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true}, all...)
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true, Start: []byte("b"), Stop: []byte("d")}, slices.Concat(scanRowCells("c", "b\x00"), b)...)
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true, Limit: 2, Stop: []byte("c\x00")}, scanRowCells("c", "b\x00")...)
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true, Limit: 1, Start: []byte("a\x00"), Stop: []byte("b\x00")}, b...)
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true, Start: []byte("b\x01"), Stop: []byte("c")})
}

// regexRows in key order; "é" is the two bytes C3 A9.
var regexRows = []string{"\x00", "\x00\x00", "\n", "a", "a\nb", "ab", "abc", "b", "xab", "é", "\xff", "\xff\x00"}

func (s *suite) testRegexFullMatch(t *testing.T) {
	tbl := s.std(t)
	for _, r := range regexRows {
		mustPut(t, tbl, r, cell(famA, "q", ms(1), r))
	}
	cases := []struct {
		re   string
		want []string
	}{
		{"ab", []string{"ab"}},
		{"b", []string{"b"}},
		{"ab.*", []string{"ab", "abc"}},
		{"a|ab", []string{"a", "ab"}},
		{"x?ab", []string{"ab", "xab"}},
		{"^ab$", []string{"ab"}},
		{".", []string{"\x00", "\n", "a", "b", "\xff"}},
		{"(?s).", []string{"\x00", "\n", "a", "b", "\xff"}},
		{"a.b", []string{"a\nb"}},
		{"..", []string{"\x00\x00", "ab", "é", "\xff\x00"}},
		{`\x00+`, []string{"\x00", "\x00\x00"}},
		{`\xff.*`, []string{"\xff", "\xff\x00"}},
		{`[\x00-\x0a]`, []string{"\x00", "\n"}},
		{`[^a-z]+`, []string{"\x00", "\x00\x00", "\n", "é", "\xff", "\xff\x00"}},
		{`\xc3\xa9`, []string{"é"}},
		{"é", []string{"é"}},
		{"\xff\x00", []string{"\xff\x00"}},
		{"zzz", nil},
		{"", regexRows},
		{".*", regexRows},
	}
	for _, c := range cases {
		wantRows(t, tbl, &storage.ScanOptions{RowRegex: c.re}, c.want...)
	}
	wantRows(t, tbl, &storage.ScanOptions{RowRegex: "a.*", Reverse: true}, "abc", "ab", "a\nb", "a")
	wantRows(t, tbl, &storage.ScanOptions{RowRegex: "a.*", Start: []byte("a\x00"), Limit: 2}, "a\nb", "ab")
}

func (s *suite) testRegexInvalid(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "ab", cell(famA, "q", ms(1), "v"))
	for _, re := range []string{"(", "a)", "[z-a]", `\`, "a**", "a)|(b", `\pX`} {
		noPanic(t, "Scan regex "+re, func() {
			cells, err := scanAll(t.Context(), tbl, &storage.ScanOptions{RowRegex: re})
			if len(cells) != 0 {
				t.Fatalf("Scan(regex %q) returned %s", re, fmtCells(cells))
			}
			wantErr(t, fmt.Sprintf("Scan(regex %q)", re), err, storage.ErrInvalidArgument)
		})
	}
}

func (s *suite) testScanFilters(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r1", cell(famA, "p1", ms(1), "1"), cell(famA, "p2", ms(2), "2"), cell(famB, "p1", ms(3), "3"), cell(famB, "x", ms(4), "4"))
	mustPut(t, tbl, "r2", cell(famA, "x", ms(1), "5"), cell(famA, "x", ms(2), "6"))
	mustPut(t, tbl, "r3", cell(famB, "p", ms(9), "7"))
	ro := func(o storage.ReadOptions) *storage.ScanOptions { return &storage.ScanOptions{ReadOptions: o} }
	wantScan(t, tbl, ro(storage.ReadOptions{QualifierPrefix: []byte("p")}),
		rc("r1", famA, "p1", ms(1), "1"), rc("r1", famA, "p2", ms(2), "2"), rc("r1", famB, "p1", ms(3), "3"), rc("r3", famB, "p", ms(9), "7"))
	wantScan(t, tbl, ro(storage.ReadOptions{QualifierStart: []byte("p1"), QualifierStop: []byte("x")}),
		rc("r1", famA, "p1", ms(1), "1"), rc("r1", famA, "p2", ms(2), "2"), rc("r1", famB, "p1", ms(3), "3"))
	wantScan(t, tbl, ro(storage.ReadOptions{MinTime: ms(2), MaxTime: ms(4)}),
		rc("r1", famA, "p2", ms(2), "2"), rc("r1", famB, "p1", ms(3), "3"), rc("r2", famA, "x", ms(2), "6"))
	wantScan(t, tbl, ro(storage.ReadOptions{Families: []string{famB}}),
		rc("r1", famB, "p1", ms(3), "3"), rc("r1", famB, "x", ms(4), "4"), rc("r3", famB, "p", ms(9), "7"))
	wantScan(t, tbl, ro(storage.ReadOptions{Qualifiers: [][]byte{[]byte("x")}, MaxVersions: 1}),
		rc("r1", famB, "x", ms(4), "4"), rc("r2", famA, "x", ms(2), "6"))
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true, ReadOptions: storage.ReadOptions{Families: []string{famA}, MaxVersions: 1}},
		rc("r2", famA, "x", ms(2), "6"), rc("r1", famA, "p1", ms(1), "1"), rc("r1", famA, "p2", ms(2), "2"))
}

func (s *suite) testScanEmptyQualifiers(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r", cell(famA, "", ms(1), "a"), cell(famB, "", ms(1), "b"), cell(famB, "\x00", ms(1), "b0"))
	mustPut(t, tbl, "s", cell(famA, "", ms(2), ""))
	want := []storage.Cell{rc("r", famA, "", ms(1), "a"), rc("r", famB, "", ms(1), "b"), rc("r", famB, "\x00", ms(1), "b0"), rc("s", famA, "", ms(2), "")}
	wantScan(t, tbl, nil, want...)
	wantScan(t, tbl, &storage.ScanOptions{ReadOptions: storage.ReadOptions{Qualifiers: [][]byte{{}}}}, want[0], want[1], want[3])
	wantScan(t, tbl, &storage.ScanOptions{ReadOptions: storage.ReadOptions{QualifierStart: []byte{0}}}, want[2])
}

func (s *suite) testScanBinaryKeys(t *testing.T) {
	tbl := s.std(t)
	s.putBinaryKeys(t, tbl)
	wantScan(t, tbl, nil, binaryKeyCells(binaryKeys...)...)
	rev := slices.Clone(binaryKeys)
	slices.Reverse(rev)
	wantRows(t, tbl, &storage.ScanOptions{Reverse: true}, rev...)
	wantRows(t, tbl, &storage.ScanOptions{Start: []byte{0}, Stop: []byte{0, 0xff}}, "\x00", "\x00\x00", "\x00\x00\x00", "\x00\x01")
	wantRows(t, tbl, &storage.ScanOptions{Start: []byte{0xff}}, "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff")
	wantRows(t, tbl, &storage.ScanOptions{Start: []byte("a\x00"), Stop: []byte("a\x01"), Reverse: true}, "a\x00\xff", "a\x00\x00", "a\x00")
	wantRows(t, tbl, &storage.ScanOptions{Start: []byte{0xff, 0xff}, Reverse: true, Limit: 1}, "\xff\xff\xff")
	wantRows(t, tbl, &storage.ScanOptions{Stop: []byte{0, 0}, Reverse: true}, "\x00")
}

// putManyRows writes n rows of two cells with Apply, in chunks.
func putManyRows(t *testing.T, tbl storage.Table, n int) {
	t.Helper()
	var muts []storage.Mutation
	for i := 0; i < n; i++ {
		r := fmt.Sprintf("row%05d", i)
		muts = append(muts, storage.Mutation{Row: []byte(r), Cells: []storage.Cell{cell(famA, "q", ms(1), r), cell(famB, "", ms(2), r)}})
		if len(muts) == 500 || i == n-1 {
			if err := tbl.Apply(t.Context(), muts); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			muts = muts[:0]
		}
	}
}

func manyRowCells(from, to, step int) []storage.Cell {
	var out []storage.Cell
	for i := from; i != to; i += step {
		r := fmt.Sprintf("row%05d", i)
		out = append(out, rc(r, famA, "q", ms(1), r), rc(r, famB, "", ms(2), r))
	}
	return out
}

func (s *suite) testScanManyRows(t *testing.T) {
	tbl := s.std(t)
	const n = 1500
	putManyRows(t, tbl, n)
	wantScan(t, tbl, nil, manyRowCells(0, n, 1)...)
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true}, manyRowCells(n-1, -1, -1)...)
	wantScan(t, tbl, &storage.ScanOptions{Start: []byte("row00100"), Stop: []byte("row01300"), Limit: 1100}, manyRowCells(100, 1200, 1)...)
	wantScan(t, tbl, &storage.ScanOptions{Start: []byte("row00100"), Stop: []byte("row01300"), Limit: 1100, Reverse: true}, manyRowCells(1299, 199, -1)...)
	wantScan(t, tbl, &storage.ScanOptions{RowRegex: "row0.*7"}, manyRowCells(7, 1507, 10)...)
}

func (s *suite) testScannerSticky(t *testing.T) {
	tbl := s.std(t)
	putScanRows(t, tbl, "a", "b")
	sc := tbl.Scan(t.Context(), nil)
	n := 0
	for sc.Next() {
		n++
	}
	if n != 2 {
		t.Fatalf("scanned %d rows, want 2", n)
	}
	for i := 0; i < 3; i++ {
		if sc.Next() || sc.Err() != nil {
			t.Fatalf("after the end: Next true or Err %v", sc.Err())
		}
	}
	if err := sc.Close(); err != nil {
		t.Fatalf("Close after a clean scan: %v", err)
	}
	if sc.Next() {
		t.Fatal("Next after Close returned true")
	}
	if err := sc.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s.checkStickyError(t, tbl.Scan(t.Context(), &storage.ScanOptions{RowRegex: "("}), storage.ErrInvalidArgument)
	// Closing part-way through is clean and ends the scan.
	sc = tbl.Scan(t.Context(), nil)
	if !sc.Next() {
		t.Fatalf("Next: %v", sc.Err())
	}
	if err := sc.Close(); err != nil || sc.Next() {
		t.Fatalf("Close mid-scan = %v; or Next true after it", err)
	}
}

// checkStickyError checks that a failed scan keeps reporting its error.
func (s *suite) checkStickyError(t *testing.T, sc storage.Scanner, target error) {
	t.Helper()
	for i := 0; i < 3; i++ {
		if sc.Next() {
			t.Fatal("Next true on a failing scan")
		}
		wantErr(t, "Err", sc.Err(), target)
	}
	wantErr(t, "Close", sc.Close(), target)
	if sc.Next() {
		t.Fatal("Next true after Close")
	}
}

func (s *suite) testScanCancel(t *testing.T) {
	tbl := s.std(t)
	const n = 1000
	putManyRows(t, tbl, n)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sc := tbl.Scan(ctx, nil)
	defer sc.Close()
	got := 0
	for got < 10 && sc.Next() {
		got++
	}
	if got != 10 {
		t.Fatalf("read %d rows before cancelling: %v", got, sc.Err())
	}
	cancel()
	for sc.Next() {
		got++
	}
	if got >= n {
		t.Fatalf("scan of %d rows ran to the end after cancel", got)
	}
	if err := sc.Err(); !isCanceled(err) {
		t.Fatalf("Err after cancel = %v; want one wrapping context.Canceled", err)
	}
}

// testScanRowShape checks that a scan yields each row once, whole, with its
// key and every cell that passes the filters, in storage order, forward
// and in reverse, and that filters and limits count rows.
func (s *suite) testScanRowShape(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r1", cell(famC, "z", ms(1), "c"), cell(famB, "x", ms(3), "b"),
		cell(famA, "q2", ms(1), "a2"), cell(famA, "q1", ms(1), "a1old"), cell(famA, "q1", ms(2), "a1"))
	mustPut(t, tbl, "r2", cell(famB, "y", ms(1), "only b"))
	mustPut(t, tbl, "r3", cell(famA, "", ms(5), "e"), cell(famA, "\x00", ms(5), "z"))
	r1 := storage.Row{Key: []byte("r1"), Cells: []storage.Cell{
		rc("r1", famA, "q1", ms(2), "a1"), rc("r1", famA, "q1", ms(1), "a1old"), rc("r1", famA, "q2", ms(1), "a2"),
		rc("r1", famB, "x", ms(3), "b"), rc("r1", famC, "z", ms(1), "c")}}
	r2 := storage.Row{Key: []byte("r2"), Cells: []storage.Cell{rc("r2", famB, "y", ms(1), "only b")}}
	r3 := storage.Row{Key: []byte("r3"), Cells: []storage.Cell{rc("r3", famA, "", ms(5), "e"), rc("r3", famA, "\x00", ms(5), "z")}}
	wantScanRows(t, tbl, nil, r1, r2, r3)
	wantScanRows(t, tbl, &storage.ScanOptions{Reverse: true}, r3, r2, r1)
	wantScanRows(t, tbl, &storage.ScanOptions{Limit: 2, Start: []byte("r1\x00")}, r2, r3)
	onlyA := storage.ReadOptions{Families: []string{famA}, MaxVersions: 1}
	wantScanRows(t, tbl, &storage.ScanOptions{Limit: 2, ReadOptions: onlyA},
		storage.Row{Key: []byte("r1"), Cells: []storage.Cell{r1.Cells[0], r1.Cells[2]}}, r3)
}

// batchCells writes n cells of 2-byte qualifiers and 100-byte values
// (198 bytes each towards a batch bound) to row and returns them as read.
func batchCells(t *testing.T, tbl storage.Table, row string, n int) []storage.Cell {
	t.Helper()
	var put, want []storage.Cell
	for i := range n {
		q, v := fmt.Sprintf("q%d", i), strings.Repeat(string(rune('a'+i)), 100)
		put = append(put, cell(famA, q, ms(1), v))
		want = append(want, rc(row, famA, q, ms(1), v))
	}
	mustPut(t, tbl, row, put...)
	return want
}

// cut splits a row's cells into batches of the given sizes, all but the
// last Partial.
func cut(key string, cells []storage.Cell, sizes ...int) []storage.Row {
	var out []storage.Row
	for i, n := range sizes {
		out = append(out, storage.Row{Key: []byte(key), Cells: cells[:n], Partial: i < len(sizes)-1})
		cells = cells[n:]
	}
	if len(cells) != 0 {
		panic("cut: sizes do not cover the cells")
	}
	return out
}

// testScanBatchBound checks where rows larger than MaxBatchBytes are cut:
// greedily in storage order, at exactly the bound, a cell larger than it
// alone, forward and in reverse, with the neighbours whole.
func (s *suite) testScanBatchBound(t *testing.T) {
	tbl := s.std(t)
	const size = 2 + 100 + storage.CellOverhead // batchCells' cells
	m := batchCells(t, tbl, "m", 10)
	putScanRows(t, tbl, "l", "n") // two cells of 98 bytes each
	l, n := scanRowCells("l"), scanRowCells("n")
	whole := func(key string, cells []storage.Cell) storage.Row {
		return storage.Row{Key: []byte(key), Cells: cells}
	}
	cases := []struct {
		bound int
		m     []int // batch sizes of row m
	}{
		{3 * size, []int{3, 3, 3, 1}},
		{3*size - 1, []int{2, 2, 2, 2, 2}},
		{3*size + 1, []int{3, 3, 3, 1}},
		{10 * size, []int{10}},
		{10*size - 1, []int{9, 1}},
		{size, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	}
	for _, c := range cases {
		o := &storage.ScanOptions{MaxBatchBytes: c.bound}
		wantScanRows(t, tbl, o, slices.Concat([]storage.Row{whole("l", l)}, cut("m", m, c.m...), []storage.Row{whole("n", n)})...)
		o.Reverse = true
		wantScanRows(t, tbl, o, slices.Concat([]storage.Row{whole("n", n)}, cut("m", m, c.m...), []storage.Row{whole("l", l)})...)
	}
	one := func(key string, cells []storage.Cell) []storage.Row { return cut(key, cells, 1, 1) }
	wantScanRows(t, tbl, &storage.ScanOptions{MaxBatchBytes: 1}, slices.Concat(one("l", l), cut("m", m, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), one("n", n))...)
	// A cell larger than the bound is a batch of its own; its neighbours
	// in the row do not join it.
	big := strings.Repeat("B", 1000)
	mustPut(t, tbl, "o", cell(famA, "1", ms(1), "s1"), cell(famA, "2", ms(1), big), cell(famA, "3", ms(1), "s3"), cell(famA, "4", ms(1), "s4"))
	o := []storage.Cell{rc("o", famA, "1", ms(1), "s1"), rc("o", famA, "2", ms(1), big), rc("o", famA, "3", ms(1), "s3"), rc("o", famA, "4", ms(1), "s4")}
	wantScanRows(t, tbl, &storage.ScanOptions{Start: []byte("o"), MaxBatchBytes: 3 * size}, cut("o", o, 1, 1, 2)...)
}

// testScanBatchLimit checks that a row cut into batches counts once
// towards Limit, and that filters apply before the bound.
func (s *suite) testScanBatchLimit(t *testing.T) {
	tbl := s.std(t)
	const size = 2 + 100 + storage.CellOverhead
	m := batchCells(t, tbl, "m", 5)
	putScanRows(t, tbl, "n", "p")
	n := storage.Row{Key: []byte("n"), Cells: scanRowCells("n")}
	wantScanRows(t, tbl, &storage.ScanOptions{Limit: 2, MaxBatchBytes: 2 * size}, append(cut("m", m, 2, 2, 1), n)...)
	wantScanRows(t, tbl, &storage.ScanOptions{Limit: 1, Reverse: true, Stop: []byte("n"), MaxBatchBytes: 2 * size}, cut("m", m, 2, 2, 1)...)
	some := storage.ReadOptions{Qualifiers: [][]byte{[]byte("q0"), []byte("q2"), []byte("q4")}}
	picked := []storage.Cell{m[0], m[2], m[4]}
	wantScanRows(t, tbl, &storage.ScanOptions{Limit: 1, MaxBatchBytes: 2 * size, ReadOptions: some}, cut("m", picked, 2, 1)...)
}

// testScanBatchDefault checks the default bound: a row of 65 cells of
// 1 MiB, 65 MiB in all, arrives as 63 cells (the most within 64 MiB), then
// 2.
func (s *suite) testScanBatchDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 65 MiB")
	}
	const size = 2 + 1<<20 + storage.CellOverhead
	if 63*size > storage.DefaultMaxBatchBytes || 64*size <= storage.DefaultMaxBatchBytes {
		t.Fatal("the test's cells no longer straddle the default bound")
	}
	tbl := s.std(t)
	value := strings.Repeat("v", 1<<20)
	var cells []storage.Cell
	for i := range 65 {
		q := fmt.Sprintf("%02d", i)
		mustPut(t, tbl, "big", cell(famA, q, ms(1), value)) // a cell a call: each Put stays small
		cells = append(cells, rc("big", famA, q, ms(1), value))
	}
	wantScanRows(t, tbl, nil, cut("big", cells, 63, 2)...)
}

func (s *suite) testScanBatchInvalid(t *testing.T) {
	tbl := s.std(t)
	putScanRows(t, tbl, "a")
	s.checkStickyError(t, tbl.Scan(t.Context(), &storage.ScanOptions{MaxBatchBytes: -1}), storage.ErrInvalidArgument)
}
