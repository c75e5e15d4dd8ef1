package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

// GetAppend's own cases; every Get case of PutGet, TTL and the rest also
// checks GetAppend against the same expectation (wantGet), and the model
// test reads through both.
func (s *suite) getAppendCases() []testCase {
	return []testCase{
		{"KeepsEarlierCells", s.testGetAppendKeepsEarlier},
		{"ReuseAcrossRows", s.testGetAppendReuse},
		{"NotFoundUnchanged", s.testGetAppendNotFound},
		{"BadInput", s.testGetAppendBadInput},
	}
}

// wideRow writes row with n cells over families a and b and returns them
// as read back.
func wideRow(t *testing.T, tbl storage.Table, row string, n int) []storage.Cell {
	t.Helper()
	var cells, want []storage.Cell
	for i := range n {
		fam := []string{famA, famB}[i%2]
		q, v := fmt.Sprintf("q%03d", i), fmt.Sprintf("%s-v%d", row, i)
		cells = append(cells, cell(fam, q, ms(int64(1+i%3)), v))
	}
	if n > 0 {
		mustPut(t, tbl, row, cells...)
	}
	for _, fam := range []string{famA, famB} {
		for _, c := range cells {
			if c.Family == fam {
				c.Row = []byte(row)
				want = append(want, c)
			}
		}
	}
	return want
}

// testGetAppendKeepsEarlier reads rows one after the other into one dst
// and buf without resetting them: each call's cells are appended and the
// cells of earlier calls still read right, whether buf had to grow (and
// the earlier cells now live in its old array) or not.
func (s *suite) testGetAppendKeepsEarlier(t *testing.T) {
	tbl := s.std(t)
	rows := []string{"r1", "r2", "r3", "r4"}
	var want []storage.Cell
	for i, r := range rows {
		want = append(want, wideRow(t, tbl, r, 1+i*7)...)
	}
	for _, room := range []int{0, 16 << 10} {
		dst, buf := make([]storage.Cell, 0, room/64), make([]byte, 0, room)
		for _, r := range append(rows, "missing") {
			var err error
			n, nb := len(dst), len(buf)
			dst, buf, err = tbl.GetAppend(t.Context(), dst, buf, []byte(r), nil)
			if r == "missing" {
				wantErr(t, "GetAppend(missing)", err, storage.ErrNotFound)
				wantUnchanged(t, "GetAppend(missing)", dst, buf, n, nb)
				continue
			}
			if err != nil {
				t.Fatalf("GetAppend(%q): %v", r, err)
			}
		}
		wantCells(t, fmt.Sprintf("four GetAppends into one dst (room %d)", room), dst, want)
	}
}

// testGetAppendReuse reads rows of very different sizes into dst[:0] and
// buf[:0] again and again, as a reader of many rows does: each read is
// exactly its row, whatever the previous one left in the buffers.
func (s *suite) testGetAppendReuse(t *testing.T) {
	tbl := s.std(t)
	sizes := []int{1, 60, 3, 0, 250, 2, 0, 1}
	want := make([][]storage.Cell, len(sizes))
	for i, n := range sizes {
		want[i] = wideRow(t, tbl, fmt.Sprintf("row%d", i), n)
	}
	var dst []storage.Cell
	var buf []byte
	for pass := range 2 {
		for i := range sizes {
			row := fmt.Sprintf("row%d", i)
			var err error
			dst, buf, err = tbl.GetAppend(t.Context(), dst[:0], buf[:0], []byte(row), nil)
			what := fmt.Sprintf("pass %d: GetAppend(%q) into reused buffers", pass, row)
			if sizes[i] == 0 {
				wantErr(t, what, err, storage.ErrNotFound)
				wantUnchanged(t, what, dst, buf, 0, 0)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			wantCells(t, what, dst, want[i])
		}
	}
}

// testGetAppendNotFound checks that a row absent, or with every cell
// filtered out, is ErrNotFound with dst and buf given back unchanged.
func (s *suite) testGetAppendNotFound(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r", cell(famA, "q", ms(5), "v"))
	reads := []struct {
		row string
		o   *storage.ReadOptions
	}{
		{"missing", nil}, {"r\x00", nil},
		{"r", &storage.ReadOptions{Families: []string{famB}}},
		{"r", &storage.ReadOptions{Qualifiers: [][]byte{[]byte("x")}}},
		{"r", &storage.ReadOptions{MinTime: ms(6)}},
	}
	for _, rd := range reads {
		for _, room := range []int{0, 100} {
			dst, buf := sentinel(room)
			what := fmt.Sprintf("GetAppend(%q, %s) with room %d", rd.row, fmtRead(rd.o), room)
			dst, buf, err := tbl.GetAppend(t.Context(), dst, buf, []byte(rd.row), rd.o)
			wantErr(t, what, err, storage.ErrNotFound)
			wantUnchanged(t, what, dst, buf, 1, 8)
			wantSentinel(t, what, dst, buf)
		}
	}
}

// testGetAppendBadInput checks that GetAppend rejects what Get rejects,
// with the same error class, giving dst and buf back unchanged.
func (s *suite) testGetAppendBadInput(t *testing.T) {
	tbl := s.std(t)
	mustPut(t, tbl, "r", cell(famA, "q", ms(1), "v"))
	long := bytes.Repeat([]byte{'k'}, storage.MaxRowKeySize+1)
	bad := []struct {
		row []byte
		o   *storage.ReadOptions
	}{
		{nil, nil}, {[]byte{}, nil}, {long, nil},
		{[]byte("r"), &storage.ReadOptions{MinTime: -1000}},
		{[]byte("r"), &storage.ReadOptions{MaxVersions: -1}},
		{[]byte("r"), &storage.ReadOptions{Families: []string{famA, "nope"}}},
	}
	for _, b := range bad {
		what := fmt.Sprintf("GetAppend(row of %d bytes, %s)", len(b.row), fmtRead(b.o))
		noPanic(t, what, func() {
			dst, buf := sentinel(10)
			_, getErr := tbl.Get(t.Context(), b.row, b.o)
			dst, buf, err := tbl.GetAppend(t.Context(), dst, buf, b.row, b.o)
			if c := badClass(err); c == nil || c != badClass(getErr) {
				t.Fatalf("%s = %v but Get = %v; want ErrInvalidArgument (or ErrNotFound for a family) from both", what, err, getErr)
			}
			wantUnchanged(t, what, dst, buf, 1, 8)
			wantSentinel(t, what, dst, buf)
		})
	}
	got, _, err := tbl.GetAppend(t.Context(), nil, nil, []byte("r"), nil)
	if err != nil || !slices.EqualFunc(got, []storage.Cell{rc("r", famA, "q", ms(1), "v")}, cellEqual) {
		t.Fatalf("GetAppend after bad calls = %s, %v", fmtCells(got), err)
	}
}

// badClass is the class of a rejection of bad input: ErrInvalidArgument,
// ErrNotFound (which the contract allows for an unknown family) or nil.
func badClass(err error) error {
	for _, c := range []error{storage.ErrInvalidArgument, storage.ErrNotFound} {
		if errors.Is(err, c) {
			return c
		}
	}
	return nil
}
