package storagetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) putGetCases() []testCase {
	return []testCase{
		{"RoundTrip", s.testRoundTrip},
		{"Versions", s.testVersions},
		{"FamilyMaxVersions", s.testFamilyMaxVersions},
		{"ReadMaxVersions", s.testReadMaxVersions},
		{"MaxVersionsBeforeTimeRange", s.testMaxVersionsBeforeTimeRange},
		{"ZeroTimestampUsesClock", s.testZeroTimestamp},
		{"EqualTimestampLaterWins", s.testEqualTimestamp},
		{"TimeRange", s.testTimeRange},
		{"ExtremeTimestamps", s.testExtremeTimestamps},
		{"EmptyWrites", s.testEmptyWrites},
		{"QualifierFilters", s.testQualifierFilters},
		{"FamilyFilter", s.testFamilyFilter},
		{"UnknownFamily", s.testUnknownFamily},
		{"BadRowKey", s.testBadRowKey},
		{"BadTimestamp", s.testBadTimestamp},
		{"MissingRow", s.testMissingRow},
		{"EmptyQualifierAndValue", s.testEmptyQualifierAndValue},
		{"BinaryRowKeys", s.testBinaryRowKeys},
		{"FamilyQualifierBoundary", s.testFamilyQualifierBoundary},
		{"LargeValuesAndRows", s.testLarge},
		{"BuffersNotRetained", s.testBuffersNotRetained},
		{"ConcurrentWritersAndReaders", s.testConcurrentRW},
	}
}

func (s *suite) testRoundTrip(t *testing.T) {
	tbl := s.std(t)
	// Written out of order; read back family, qualifier, timestamp descending.
	mustPut(t, tbl, "row",
		cell(famB, "y", ms(5), "b-y"),
		cell(famA, "z", ms(1), "a-z"),
		cell(famA, "q", ms(1), "a-q1"),
		cell(famA, "q", ms(7), "a-q7"),
		cell(famC, "", ms(3), "c"),
	)
	want := []storage.Cell{
		rc("row", famA, "q", ms(7), "a-q7"),
		rc("row", famA, "q", ms(1), "a-q1"),
		rc("row", famA, "z", ms(1), "a-z"),
		rc("row", famB, "y", ms(5), "b-y"),
		rc("row", famC, "", ms(3), "c"),
	}
	wantGet(t, tbl, "row", nil, want...)
	wantGet(t, tbl, "row", &storage.ReadOptions{}, want...)
	wantScan(t, tbl, nil, want...)
}

func (s *suite) testVersions(t *testing.T) {
	tbl := s.std(t)
	for i := int64(1); i <= 5; i++ {
		mustPut(t, tbl, "r", cell(famA, "q", ms(i*10), fmt.Sprint(i)))
	}
	var want []storage.Cell
	for i := int64(5); i >= 1; i-- {
		want = append(want, rc("r", famA, "q", ms(i*10), fmt.Sprint(i)))
	}
	wantGet(t, tbl, "r", nil, want...)
	// An older version written last still sorts by timestamp.
	mustPut(t, tbl, "r", cell(famA, "q", ms(25), "2.5"))
	want = append(want[:3:3], append([]storage.Cell{rc("r", famA, "q", ms(25), "2.5")}, want[3:]...)...)
	wantGet(t, tbl, "r", nil, want...)
}

func (s *suite) testFamilyMaxVersions(t *testing.T) {
	tbl := s.std(t)
	for i := int64(1); i <= 4; i++ {
		mustPut(t, tbl, "r", cell(famB, "q", ms(i), fmt.Sprint(i)), cell(famC, "q", ms(i), fmt.Sprint(i)))
	}
	want := []storage.Cell{
		rc("r", famB, "q", ms(4), "4"), rc("r", famB, "q", ms(3), "3"),
		rc("r", famC, "q", ms(4), "4"),
	}
	wantGet(t, tbl, "r", nil, want...)
	wantScan(t, tbl, nil, want...)
	// A version older than the kept ones is surplus at once.
	mustPut(t, tbl, "r", cell(famB, "q", ms(2), "late"), cell(famC, "q", ms(1), "late"))
	wantGet(t, tbl, "r", nil, want...)
	// A newer one pushes the oldest kept one out.
	mustPut(t, tbl, "r", cell(famB, "q", ms(9), "9"))
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famB}},
		rc("r", famB, "q", ms(9), "9"), rc("r", famB, "q", ms(4), "4"))
}

func (s *suite) testReadMaxVersions(t *testing.T) {
	tbl := s.std(t)
	for i := int64(1); i <= 3; i++ {
		mustPut(t, tbl, "r", cell(famA, "p", ms(i), "p"), cell(famA, "q", ms(i), "q"), cell(famB, "q", ms(i), "b"))
	}
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxVersions: 1},
		rc("r", famA, "p", ms(3), "p"), rc("r", famA, "q", ms(3), "q"), rc("r", famB, "q", ms(3), "b"))
	// The read's limit applies after the family's: b keeps 2, so 5 gives 2.
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famB}, MaxVersions: 5},
		rc("r", famB, "q", ms(3), "b"), rc("r", famB, "q", ms(2), "b"))
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famA}, MaxVersions: 2},
		rc("r", famA, "p", ms(3), "p"), rc("r", famA, "p", ms(2), "p"),
		rc("r", famA, "q", ms(3), "q"), rc("r", famA, "q", ms(2), "q"))
	wantScan(t, tbl, &storage.ScanOptions{ReadOptions: storage.ReadOptions{MaxVersions: 1, Families: []string{famA}}},
		rc("r", famA, "p", ms(3), "p"), rc("r", famA, "q", ms(3), "q"))
}

// testMaxVersionsBeforeTimeRange pins the order of read-time rules: the
// family's limit first (as garbage collection would), then the time range,
// then the read's MaxVersions.
func (s *suite) testMaxVersionsBeforeTimeRange(t *testing.T) {
	tbl := s.std(t)
	for i := int64(3); i <= 5; i++ {
		mustPut(t, tbl, "r", cell(famA, "q", ms(i), fmt.Sprint(i)), cell(famB, "q", ms(i), fmt.Sprint(i)))
	}
	below := &storage.ReadOptions{Families: []string{famB}, MaxTime: ms(4)}
	wantGet(t, tbl, "r", below) // b's version 3 is surplus: never shown
	wantScan(t, tbl, &storage.ScanOptions{ReadOptions: *below})
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famA}, MaxTime: ms(5), MaxVersions: 1},
		rc("r", famA, "q", ms(4), "4"))
}

func (s *suite) testZeroTimestamp(t *testing.T) {
	tbl := s.std(t)
	before := s.nowMicros()
	mustPut(t, tbl, "r", cell(famA, "q", 0, "now"), cell(famA, "p", 0, "now"))
	after := s.nowMicros() + 1000
	cells := mustGet(t, tbl, "r", nil)
	if len(cells) != 2 {
		t.Fatalf("Get = %s; want 2 cells", fmtCells(cells))
	}
	for _, c := range cells {
		if c.Timestamp < before-1000 || c.Timestamp > after || c.Timestamp%1000 != 0 {
			t.Fatalf("zero timestamp stored as %d; want a whole millisecond in [%d, %d]", c.Timestamp, before, after)
		}
	}
	if cells[0].Timestamp != cells[1].Timestamp {
		t.Fatalf("one Put stamped two times: %s", fmtCells(cells))
	}
	// Explicit timestamps from the past sort below the clock's.
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "past"))
	got := mustGet(t, tbl, "r", &storage.ReadOptions{Qualifiers: [][]byte{[]byte("q")}})
	if len(got) != 2 || string(got[0].Value) != "now" || string(got[1].Value) != "past" {
		t.Fatalf("Get q = %s; want now then past", fmtCells(got))
	}
}

func (s *suite) testEqualTimestamp(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r", cell(famA, "q", ms(5), "first"))
	mustPut(t, tbl, "r", cell(famA, "q", ms(5), "second"))
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(5), "second"))
	if err := tbl.Apply(t.Context(), []storage.Mutation{{Row: []byte("r"), Cells: []storage.Cell{cell(famA, "q", ms(5), "third")}}}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.CheckAndPut(t.Context(), []byte("r"), famA, []byte("q"), []byte("third"), []storage.Cell{cell(famA, "q", ms(5), "fourth")}); err != nil {
		t.Fatal(err)
	}
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(5), "fourth"))
	wantScan(t, tbl, nil, rc("r", famA, "q", ms(5), "fourth"))
}

func (s *suite) testTimeRange(t *testing.T) {
	tbl := s.std(t)
	for i := int64(1); i <= 5; i++ {
		mustPut(t, tbl, "r", cell(famA, "q", ms(i), fmt.Sprint(i)))
	}
	v := func(i int64) storage.Cell { return rc("r", famA, "q", ms(i), fmt.Sprint(i)) }
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: ms(2), MaxTime: ms(4)}, v(3), v(2))
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: ms(4)}, v(5), v(4))
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxTime: ms(2)}, v(1))
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: ms(3), MaxTime: ms(3) + 1000}, v(3))
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: ms(6)})
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: ms(2), MaxTime: ms(2)})
	wantScan(t, tbl, &storage.ScanOptions{ReadOptions: storage.ReadOptions{MinTime: ms(2), MaxTime: ms(4)}}, v(3), v(2))
}

func (s *suite) testQualifierFilters(t *testing.T) {
	tbl := s.std(t)
	quals := []string{"", "\x00", "a", "ab", "abc", "b", "b\x00", "b\xff", "\xff"}
	for _, q := range quals {
		mustPut(t, tbl, "r", cell(famA, q, ms(1), "v"+q))
	}
	c := func(qs ...string) []storage.Cell {
		var out []storage.Cell
		for _, q := range qs {
			out = append(out, rc("r", famA, q, ms(1), "v"+q))
		}
		return out
	}
	wantGet(t, tbl, "r", nil, c(quals...)...)
	wantGet(t, tbl, "r", &storage.ReadOptions{Qualifiers: [][]byte{[]byte("ab"), {}, []byte("zz"), {0xff}}}, c("", "ab", "\xff")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{Qualifiers: [][]byte{{}}}, c("")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{Qualifiers: [][]byte{[]byte("zz")}})
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierPrefix: []byte("a")}, c("a", "ab", "abc")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierPrefix: []byte("b")}, c("b", "b\x00", "b\xff")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierPrefix: []byte{0xff}}, c("\xff")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierStart: []byte("ab"), QualifierStop: []byte("b\x00")}, c("ab", "abc", "b")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierStop: []byte("a")}, c("", "\x00")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierStart: []byte("b\x00")}, c("b\x00", "b\xff", "\xff")...)
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierStart: []byte("b"), QualifierStop: []byte("b")})
	// Filters combine: prefix and range and set all hold.
	wantGet(t, tbl, "r", &storage.ReadOptions{QualifierPrefix: []byte("a"), QualifierStart: []byte("ab"),
		Qualifiers: [][]byte{[]byte("a"), []byte("abc"), []byte("b")}}, c("abc")...)
}

func (s *suite) testFamilyFilter(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "a"), cell(famB, "q", ms(1), "b"), cell(famC, "q", ms(1), "c"))
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famB}}, rc("r", famB, "q", ms(1), "b"))
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famC, famA}},
		rc("r", famA, "q", ms(1), "a"), rc("r", famC, "q", ms(1), "c"))
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famTTL}})
}

func (s *suite) testUnknownFamily(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	err := tbl.Put(ctx, []byte("r"), []storage.Cell{cell(famA, "q", ms(1), "v"), cell("nope", "q", ms(1), "v")})
	wantBadFamily(t, "Put", err, "nope")
	wantGet(t, tbl, "r", nil) // Put is atomic: the good cell is not written either
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "v"))
	_, err = tbl.Get(ctx, []byte("r"), &storage.ReadOptions{Families: []string{"nope"}})
	wantBadFamily(t, "Get", err, "nope")
	_, err = scanAll(ctx, tbl, &storage.ScanOptions{ReadOptions: storage.ReadOptions{Families: []string{famA, "nope"}}})
	wantBadFamily(t, "Scan", err, "nope")
	wantBadFamily(t, "Delete", tbl.Delete(ctx, []byte("r"), storage.Deletion{Kind: storage.DeleteFamily, Family: "nope"}), "nope")
	_, err = tbl.Increment(ctx, []byte("r"), "nope", []byte("n"), 1)
	wantBadFamily(t, "Increment", err, "nope")
	_, err = tbl.Append(ctx, []byte("r"), "nope", []byte("n"), []byte("x"))
	wantBadFamily(t, "Append", err, "nope")
	wantBadFamily(t, "CheckAndPut", tbl.CheckAndPut(ctx, []byte("r"), "nope", []byte("q"), nil, []storage.Cell{cell(famA, "x", ms(1), "v")}), "nope")
	wantBadFamily(t, "CheckAndPut cells", tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("zz"), nil, []storage.Cell{cell("nope", "x", ms(1), "v")}), "nope")
	wantBadFamily(t, "Apply", tbl.Apply(ctx, []storage.Mutation{{Row: []byte("r"), Cells: []storage.Cell{cell("nope", "x", ms(1), "v")}}}), "nope")
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(1), "v"))
}

func (s *suite) testBadRowKey(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	cells := []storage.Cell{cell(famA, "q", ms(1), "v")}
	for _, row := range [][]byte{nil, {}, bytes.Repeat([]byte{'k'}, storage.MaxRowKeySize+1)} {
		what := fmt.Sprintf("row of %d bytes", len(row))
		noPanic(t, what, func() {
			wantErr(t, what+": Put", tbl.Put(ctx, row, cells), storage.ErrInvalidArgument)
			_, err := tbl.Get(ctx, row, nil)
			wantErr(t, what+": Get", err, storage.ErrInvalidArgument)
			wantErr(t, what+": Delete", tbl.Delete(ctx, row), storage.ErrInvalidArgument)
			_, err = tbl.Increment(ctx, row, famC, []byte("n"), 1)
			wantErr(t, what+": Increment", err, storage.ErrInvalidArgument)
			_, err = tbl.Append(ctx, row, famC, []byte("n"), []byte("x"))
			wantErr(t, what+": Append", err, storage.ErrInvalidArgument)
			wantErr(t, what+": CheckAndPut", tbl.CheckAndPut(ctx, row, famA, []byte("q"), nil, cells), storage.ErrInvalidArgument)
			wantErr(t, what+": Apply", tbl.Apply(ctx, []storage.Mutation{{Row: row, Cells: cells}}), storage.ErrInvalidArgument)
		})
	}
	wantScan(t, tbl, nil)
	biggest := strings.Repeat("k", storage.MaxRowKeySize)
	mustPut(t, tbl, biggest, cells...)
	wantGet(t, tbl, biggest, nil, rc(biggest, famA, "q", ms(1), "v"))
}

func (s *suite) testBadTimestamp(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	for _, ts := range []int64{1, 999, 1500, -1000, -1} {
		cells := []storage.Cell{cell(famA, "ok", ms(1), "v"), cell(famA, "q", ts, "v")}
		what := fmt.Sprintf("timestamp %d", ts)
		wantErr(t, what+": Put", tbl.Put(ctx, []byte("r"), cells), storage.ErrInvalidArgument)
		wantErr(t, what+": Apply", tbl.Apply(ctx, []storage.Mutation{{Row: []byte("r"), Cells: cells}}), storage.ErrInvalidArgument)
		wantErr(t, what+": CheckAndPut", tbl.CheckAndPut(ctx, []byte("r"), famA, []byte("q"), nil, cells), storage.ErrInvalidArgument)
	}
	wantGet(t, tbl, "r", nil) // nothing of the rejected rows was written
	_, err := tbl.Get(ctx, []byte("r"), &storage.ReadOptions{MinTime: -1000})
	wantErr(t, "Get MinTime<0", err, storage.ErrInvalidArgument)
	_, err = tbl.Get(ctx, []byte("r"), &storage.ReadOptions{MaxVersions: -1})
	wantErr(t, "Get MaxVersions<0", err, storage.ErrInvalidArgument)
}

func (s *suite) testMissingRow(t *testing.T) {
	tbl := s.std(t)
	wantGet(t, tbl, "missing", nil)
	mustPut(t, tbl, "r", cell(famA, "q", ms(5), "v"))
	wantGet(t, tbl, "missing", nil)
	wantGet(t, tbl, "r\x00", nil)
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famB}})
	wantGet(t, tbl, "r", &storage.ReadOptions{Qualifiers: [][]byte{[]byte("x")}})
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: ms(6)})
}

func (s *suite) testEmptyQualifierAndValue(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r",
		storage.Cell{Family: famA, Timestamp: ms(1)},
		storage.Cell{Family: famA, Qualifier: []byte{0}, Timestamp: ms(1), Value: []byte{0}},
		storage.Cell{Family: famA, Qualifier: []byte{}, Timestamp: ms(2), Value: []byte{}},
	)
	want := []storage.Cell{rc("r", famA, "", ms(2), ""), rc("r", famA, "", ms(1), ""), rc("r", famA, "\x00", ms(1), "\x00")}
	wantGet(t, tbl, "r", nil, want...)
	wantScan(t, tbl, nil, want...)
}

// binaryKeys sort bytewise as listed; engines that escape or separate keys
// with 0x00 or 0xFF get them wrong first.
var binaryKeys = []string{
	"\x00", "\x00\x00", "\x00\x00\x00", "\x00\x01", "\x00\xff", "\x01",
	"a", "a\x00", "a\x00\x00", "a\x00\xff", "a\x01", "ab", "a\xff", "a\xff\xff",
	"\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff",
}

func (s *suite) putBinaryKeys(t *testing.T, tbl storage.Table) {
	t.Helper()
	for i := len(binaryKeys) - 1; i >= 0; i-- {
		k := binaryKeys[i]
		mustPut(t, tbl, k, cell(famA, k, ms(1), k), cell(famB, "", ms(1), k))
	}
}

func binaryKeyCells(keys ...string) []storage.Cell {
	var out []storage.Cell
	for _, k := range keys {
		out = append(out, rc(k, famA, k, ms(1), k), rc(k, famB, "", ms(1), k))
	}
	return out
}

func (s *suite) testBinaryRowKeys(t *testing.T) {
	tbl := s.std(t)
	s.putBinaryKeys(t, tbl)
	for _, k := range binaryKeys {
		wantGet(t, tbl, k, nil, binaryKeyCells(k)...)
	}
	wantGet(t, tbl, "\x00\x00\x00\x00", nil)
	wantGet(t, tbl, "\xff\xff\xff\xff", nil)
}

// testFamilyQualifierBoundary uses families that prefix each other with
// qualifiers that complete them, so family+qualifier concatenations collide.
func (s *suite) testFamilyQualifierBoundary(t *testing.T) {
	spec := storage.TableSpec{Name: "fq", Families: []storage.FamilySpec{
		{Name: "f0"}, {Name: "f"}, {Name: "f-"}, {Name: "F"}, {Name: "_"}, {Name: "f00"},
	}}
	_, tbl := s.table(t, spec)
	mustPut(t, tbl, "r",
		cell("f", "0x", ms(1), "f/0x"), cell("f0", "x", ms(1), "f0/x"), cell("f00", "", ms(1), "f00/"),
		cell("f0", "0", ms(1), "f0/0"), cell("f", "00", ms(1), "f/00"), cell("f-", "", ms(1), "f-/"),
		cell("F", "\xff", ms(1), "F"), cell("_", "\x00", ms(1), "_"), cell("f", "", ms(1), "f/"),
	)
	want := []storage.Cell{
		rc("r", "F", "\xff", ms(1), "F"), rc("r", "_", "\x00", ms(1), "_"),
		rc("r", "f", "", ms(1), "f/"), rc("r", "f", "00", ms(1), "f/00"), rc("r", "f", "0x", ms(1), "f/0x"),
		rc("r", "f-", "", ms(1), "f-/"),
		rc("r", "f0", "0", ms(1), "f0/0"), rc("r", "f0", "x", ms(1), "f0/x"),
		rc("r", "f00", "", ms(1), "f00/"),
	}
	wantGet(t, tbl, "r", nil, want...)
	wantScan(t, tbl, nil, want...)
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{"f"}}, want[2:5]...)
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{"f0"}}, want[6:8]...)
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{"f", "f0"}, QualifierPrefix: []byte("0")},
		want[3], want[4], want[6])
	if err := tbl.Delete(t.Context(), []byte("r"), storage.Deletion{Kind: storage.DeleteFamily, Family: "f"}); err != nil {
		t.Fatal(err)
	}
	wantGet(t, tbl, "r", nil, append(want[:2:2], want[5:]...)...)
	if err := tbl.Delete(t.Context(), []byte("r"), storage.Deletion{Kind: storage.DeleteColumn, Family: "f0", Qualifier: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	wantGet(t, tbl, "r", &storage.ReadOptions{Families: []string{"f0", "f00"}}, want[7], want[8])
}

func (s *suite) testLarge(t *testing.T) {
	tbl := s.std(t)
	big := strings.Repeat("0123456789abcdef", 16<<10) // 256 KiB
	mustPut(t, tbl, "big", cell(famA, "q", ms(1), big))
	wantGet(t, tbl, "big", nil, rc("big", famA, "q", ms(1), big))
	var cells, want []storage.Cell
	for i := 0; i < 1000; i++ {
		q := fmt.Sprintf("q%04d", i)
		cells = append(cells, cell(famA, q, ms(1), q))
		want = append(want, rc("wide", famA, q, ms(1), q))
	}
	mustPut(t, tbl, "wide", cells...)
	wantGet(t, tbl, "wide", nil, want...)
	wantScan(t, tbl, &storage.ScanOptions{Start: []byte("wide")}, want...)
}

func (s *suite) testBuffersNotRetained(t *testing.T) {
	tbl := s.std(t)
	row, q, v := []byte("row"), []byte("qual"), []byte("value")
	if err := tbl.Put(t.Context(), row, []storage.Cell{{Family: famA, Qualifier: q, Timestamp: ms(1), Value: v}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{row, q, v} {
		for i := range b {
			b[i] = 'X'
		}
	}
	got := mustGet(t, tbl, "row", nil)
	wantCells(t, "Get after caller reused its buffers", got, []storage.Cell{rc("row", famA, "qual", ms(1), "value")})
	for _, b := range [][]byte{got[0].Row, got[0].Qualifier, got[0].Value} {
		for i := range b {
			b[i] = 'Y'
		}
	}
	wantGet(t, tbl, "row", nil, rc("row", famA, "qual", ms(1), "value"))
}

// testConcurrentRW runs writers on their own rows next to a scanning reader;
// each writer reads back what it wrote, and the end state holds every row.
func (s *suite) testConcurrentRW(t *testing.T) {
	tbl := s.std(t)
	g, per := s.opts.Goroutines, max(1, s.opts.OpsPerGoroutine/4)
	ctx, stop := context.WithCancel(t.Context())
	errs := make(chan error, g+1)
	var readers, writers sync.WaitGroup
	readers.Go(func() {
		for ctx.Err() == nil {
			if _, err := scanAll(ctx, tbl, &storage.ScanOptions{Reverse: true}); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("scan: %w", err)
				return
			}
		}
	})
	for i := range g {
		writers.Go(func() { errs <- writeAndRead(t.Context(), tbl, i, per) })
	}
	writers.Wait()
	stop()
	readers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	cells, err := scanAll(t.Context(), tbl, nil)
	if err != nil || len(cells) != 2*g*per {
		t.Fatalf("final scan: %d cells, %v; want %d", len(cells), err, 2*g*per)
	}
}

func writeAndRead(ctx context.Context, tbl storage.Table, w, n int) error {
	for j := range n {
		row := []byte(fmt.Sprintf("w%02d-%04d", w, j))
		cells := []storage.Cell{cell(famA, "q", ms(int64(j+1)), string(row)), cell(famB, "", ms(1), "b")}
		if err := tbl.Put(ctx, row, cells); err != nil {
			return fmt.Errorf("put %q: %w", row, err)
		}
		got, err := tbl.Get(ctx, row, nil)
		if err != nil || len(got) != 2 || string(got[0].Value) != string(row) {
			return fmt.Errorf("get %q after put = %s, %v", row, fmtCells(got), err)
		}
	}
	return nil
}

// testExtremeTimestamps stores the smallest and largest legal timestamps,
// where an engine's descending encoding or unbounded-range sentinel breaks.
func (s *suite) testExtremeTimestamps(t *testing.T) {
	tbl := s.std(t)
	top := int64(math.MaxInt64 - math.MaxInt64%1000)
	mid := int64(1<<53 - (1<<53)%1000)
	mustPut(t, tbl, "r", cell(famA, "q", 1000, "min"), cell(famA, "q", top, "max"), cell(famA, "q", mid, "mid"))
	all := []storage.Cell{rc("r", famA, "q", top, "max"), rc("r", famA, "q", mid, "mid"), rc("r", famA, "q", 1000, "min")}
	wantGet(t, tbl, "r", nil, all...)
	wantScan(t, tbl, &storage.ScanOptions{Reverse: true}, all...)
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: top}, all[0])
	wantGet(t, tbl, "r", &storage.ReadOptions{MinTime: mid, MaxTime: top}, all[1])
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxTime: 2000}, all[2])
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxVersions: 1}, all[0])
	mustDelete(t, tbl, "r", storage.Deletion{Kind: storage.DeleteColumn, Family: famA, Qualifier: []byte("q"), MinTime: top})
	wantGet(t, tbl, "r", nil, all[1:]...)
}

// testEmptyWrites checks that writes with nothing in them succeed and
// change nothing.
func (s *suite) testEmptyWrites(t *testing.T) {
	tbl := s.std(t)
	if err := tbl.Put(t.Context(), []byte("r"), nil); err != nil {
		t.Fatalf("Put with no cells: %v", err)
	}
	wantGet(t, tbl, "r", nil)
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "v"))
	if err := tbl.Put(t.Context(), []byte("r"), []storage.Cell{}); err != nil {
		t.Fatalf("Put with no cells: %v", err)
	}
	wantGet(t, tbl, "r", nil, rc("r", famA, "q", ms(1), "v"))
}
