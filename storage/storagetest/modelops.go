package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/tsd-db/tsd/storage"
)

func (r *modelRun) opPut() {
	row, cells := r.row(), r.genCells(1+r.pick(4))
	err := r.tbl.Put(r.t.Context(), row, cells)
	r.logf("Put(%q, %s) -> %v", row, fmtWrites(cells), err)
	r.sameErr("Put", err, r.m.put(row, cells), false)
}

// opBadPut writes a good cell and a bad one: the Put must fail whole.
func (r *modelRun) opBadPut() {
	row, cells := r.row(), r.genCells(1)
	if r.coin(2) {
		cells = append(cells, storage.Cell{Family: "zz", Qualifier: r.qual(), Timestamp: ms(1)})
	} else {
		cells = append(cells, storage.Cell{Family: famA, Qualifier: r.qual(), Timestamp: 1500})
	}
	err := r.tbl.Put(r.t.Context(), row, cells)
	r.logf("Put(%q, %s) -> %v", row, fmtWrites(cells), err)
	r.sameErr("bad Put", err, r.m.put(row, cells), true)
}

func (r *modelRun) opDelete() {
	row := r.row()
	var dels []storage.Deletion
	for range r.pick(3) {
		dels = append(dels, r.genDeletion())
	}
	err := r.tbl.Delete(r.t.Context(), row, dels...)
	r.logf("Delete(%q, %s) -> %v", row, fmtDeletions(dels), err)
	r.sameErr("Delete", err, r.m.delete(row, dels), false)
}

func (r *modelRun) opDeleteRange() {
	start, stop := r.bound(), r.bound()
	if start == nil && !r.coin(4) {
		start = r.row()
	}
	if stop != nil && bytes.Compare(start, stop) > 0 {
		start, stop = stop, start
	}
	err := r.tbl.DeleteRange(r.t.Context(), start, stop)
	r.logf("DeleteRange(%q, %q) -> %v", start, stop, err)
	if err != nil {
		r.fail("DeleteRange: %v", err)
	}
	r.m.deleteRange(start, stop)
}

func (r *modelRun) opApply() {
	var muts []storage.Mutation
	used := make(map[string]bool)
	for range 1 + r.pick(3) {
		mu := storage.Mutation{Row: r.row()}
		if used[string(mu.Row)] {
			continue // rows of one batch are independent: their order is not defined
		}
		used[string(mu.Row)] = true
		for range r.pick(3) {
			mu.Deletes = append(mu.Deletes, r.genDeletion())
		}
		mu.Cells = r.genCells(r.pick(4))
		muts = append(muts, mu)
	}
	err := r.tbl.Apply(r.t.Context(), muts)
	r.logf("Apply(%s) -> %v", fmtMutations(muts), err)
	r.sameErr("Apply", err, r.m.apply(muts), false)
}

func (r *modelRun) opIncrement() {
	row, q, delta := r.row(), r.qual(), int64(r.pick(9)-3)
	got, err := r.tbl.Increment(r.t.Context(), row, famC, q, delta)
	r.logf("Increment(%q, c:%q, %d) -> %d, %v", row, q, delta, got, err)
	want, merr := r.m.increment(row, famC, q, delta)
	r.sameErr("Increment", err, merr, false)
	if err == nil && got != want {
		r.fail("Increment returned %d, model %d", got, want)
	}
}

func (r *modelRun) opCheckAndPut() {
	row, fam, q := r.row(), famC, r.qual()
	if r.coin(3) {
		fam = r.family()
	}
	var expected []byte
	switch r.pick(4) {
	case 1:
		expected = []byte{}
	case 2:
		if v, ok := r.m.newest(row, fam, q); ok {
			expected = bytes.Clone(v.value)
			if expected == nil {
				expected = []byte{}
			}
		}
	case 3:
		expected = r.valueOf()
	}
	cells := r.genCells(1 + r.pick(3))
	err := r.tbl.CheckAndPut(r.t.Context(), row, fam, q, expected, cells)
	r.logf("CheckAndPut(%q, %s:%q, expect %s, %s) -> %v", row, fam, q, fmtExpected(expected), fmtWrites(cells), err)
	r.sameErr("CheckAndPut", err, r.m.checkAndPut(row, fam, q, expected, cells), false)
}

func (r *modelRun) opAppend() {
	row, q, p := r.row(), r.qual(), r.piece()
	got, err := r.tbl.Append(r.t.Context(), row, famC, q, p)
	r.logf("Append(%q, c:%q, %q) -> %q, %v", row, q, p, got, err)
	want, merr := r.m.append(row, famC, q, p)
	r.sameErr("Append", err, merr, false)
	if err == nil && !bytes.Equal(got, want) {
		r.fail("Append returned %q, model %q", got, want)
	}
}

func (r *modelRun) opGet() {
	row := r.row()
	if r.coin(8) {
		row = []byte{0x62}
	}
	o := r.genRead()
	got, err := r.tbl.Get(r.t.Context(), row, o)
	r.logf("Get(%q, %s) -> %d cells, %v", row, fmtRead(o), len(got), err)
	want, merr := r.m.get(row, o)
	r.sameErr("Get", err, merr, false)
	r.sameCells("Get", got, want)
	r.getAppend(row, o, want, merr)
}

// getAppend reads row as opGet did through GetAppend, into the run's
// buffers: reused from the start (dst[:0], buf[:0]) or, every other time,
// after the cells of earlier reads, which must stay intact.
func (r *modelRun) getAppend(row []byte, o *storage.ReadOptions, want []storage.Cell, merr error) {
	if r.coin(2) || len(r.dst) > 64 {
		r.dst, r.buf = r.dst[:0], r.buf[:0]
	}
	before := make([]storage.Cell, len(r.dst))
	for i, c := range r.dst {
		before[i] = copyCell(c)
	}
	n, nb := len(r.dst), len(r.buf)
	dst, buf, err := r.tbl.GetAppend(r.t.Context(), r.dst, r.buf, row, o)
	r.logf("GetAppend(%d cells, %d bytes, %q, %s) -> %d cells, %d bytes, %v", n, nb, row, fmtRead(o), len(dst), len(buf), err)
	r.sameErr("GetAppend", err, merr, false)
	if err != nil && (len(dst) != n || len(buf) != nb) {
		r.fail("GetAppend failed but returned %d cells, %d bytes; want %d, %d unchanged", len(dst), len(buf), n, nb)
	}
	if len(dst) < n {
		r.fail("GetAppend shrank dst from %d to %d cells", n, len(dst))
	}
	r.sameCells("GetAppend's earlier cells", dst[:n], before)
	if err == nil {
		r.sameCells("GetAppend", dst[n:], want)
	}
	r.dst, r.buf = dst, buf
}

func (r *modelRun) opScan() {
	o := r.genScan()
	got, err := scanRows(r.t.Context(), r.tbl, o)
	r.logf("Scan(%s) -> %d rows, %v", fmtScan(o), len(got), err)
	want, merr := r.m.scan(o)
	r.sameErr("Scan", err, merr, false)
	r.sameRows("Scan", got, want)
}

// checkAll compares every stored cell, as a full scan sees it.
func (r *modelRun) checkAll() {
	got, err := scanRows(r.t.Context(), r.tbl, nil)
	if err != nil {
		r.fail("full scan: %v", err)
	}
	want, _ := r.m.scan(nil)
	r.sameRows("full scan after the write", got, want)
}

// sameRows compares rows as sameCells does cells, and their keys and
// Partial marks exactly.
func (r *modelRun) sameRows(what string, got, want []storage.Row) {
	r.t.Helper()
	if !sameRows(got, want, r.cellMatch) {
		r.fail("%s differs:\n got %d rows:\n%s want %d rows:\n%s", what, len(got), fmtRows(got), len(want), fmtRows(want))
	}
}

// sameErr fails unless err and the model's merr agree in class; loose
// accepts any error where the model has one (for bad input whose class the
// contract leaves open).
func (r *modelRun) sameErr(what string, err, merr error, loose bool) {
	r.t.Helper()
	if (err == nil) != (merr == nil) {
		r.fail("%s: engine error %v, model error %v", what, err, merr)
	}
	if loose || merr == nil {
		return
	}
	for _, class := range []error{storage.ErrNotFound, storage.ErrConflict, storage.ErrInvalidArgument} {
		if errors.Is(merr, class) && !errors.Is(err, class) {
			r.fail("%s: engine error %v, model error %v", what, err, merr)
		}
	}
}

func (r *modelRun) sameCells(what string, got, want []storage.Cell) {
	r.t.Helper()
	if d := diffCells(got, want, r.cellMatch); d != "" {
		r.fail("%s differs:\n%s", what, d)
	}
}

// cellMatch compares cells exactly, except that family c's clock stamps
// need only fall within the run.
func (r *modelRun) cellMatch(a, b storage.Cell) bool {
	if a.Family != famC || b.Family != famC {
		return cellEqual(a, b)
	}
	now := r.now().UnixMicro() + 1000
	inRun := func(ts int64) bool { return ts >= r.start-1000 && ts <= now }
	if !inRun(a.Timestamp) || !inRun(b.Timestamp) {
		return false
	}
	a.Timestamp, b.Timestamp = 0, 0
	return cellEqual(a, b)
}

func fmtWrites(cells []storage.Cell) string {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = fmt.Sprintf("%s:%q@%d=%q", c.Family, c.Qualifier, c.Timestamp, c.Value)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtDeletions(dels []storage.Deletion) string {
	parts := make([]string, len(dels))
	for i, d := range dels {
		kind := [...]string{"row", "family", "column"}[min(int(d.Kind), 2)]
		parts[i] = fmt.Sprintf("%s(%s:%q [%d,%d))", kind, d.Family, d.Qualifier, d.MinTime, d.MaxTime)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtMutations(muts []storage.Mutation) string {
	parts := make([]string, len(muts))
	for i, mu := range muts {
		parts[i] = fmt.Sprintf("%q: del %s put %s", mu.Row, fmtDeletions(mu.Deletes), fmtWrites(mu.Cells))
	}
	return strings.Join(parts, "; ")
}

func fmtExpected(b []byte) string {
	if b == nil {
		return "absent"
	}
	return fmt.Sprintf("%q", b)
}
