package bigtable

import (
	"context"
	"fmt"

	bt "cloud.google.com/go/bigtable"

	"github.com/tsd-db/tsd/storage"
)

// nowTimestamp is the clock as a cell timestamp, microseconds at whole
// milliseconds: it stamps zero timestamps and measures TTL.
func (db *DB) nowTimestamp() int64 {
	us := db.opts.Clock().UnixMicro()
	return us - us%1000
}

// rowMutation is one row's operations with their count and approximate
// payload size, for chunking ApplyBulk requests.
type rowMutation struct {
	row   string
	m     *bt.Mutation
	ops   int
	bytes int
	cells [][]storage.Cell // written so far, for a later family-range delete
}

// Put writes cells to one row atomically; cells with a zero timestamp get
// the clock's time.
func (t *table) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	if err := t.validateWrite(row, nil, cells); err != nil {
		return err
	}
	rm := rowMutation{row: string(row), m: bt.NewMutation()}
	rm.addCells(cells, t.db.nowTimestamp())
	return t.applyRow(ctx, "put", rm)
}

// Delete removes cells of one row atomically; no deletions removes the row.
func (t *table) Delete(ctx context.Context, row []byte, dels ...storage.Deletion) error {
	if len(dels) == 0 {
		dels = []storage.Deletion{{Kind: storage.DeleteRow}}
	}
	if err := t.validateWrite(row, dels, nil); err != nil {
		return err
	}
	rm := rowMutation{row: string(row), m: bt.NewMutation()}
	if err := t.addDeletes(ctx, &rm, dels); err != nil {
		return err
	}
	return t.applyRow(ctx, "delete", rm)
}

// validateWrite checks a row's key, deletions and cells against the spec.
func (t *table) validateWrite(row []byte, dels []storage.Deletion, cells []storage.Cell) error {
	spec := t.Spec()
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	for i, d := range dels {
		if err := storage.ValidateDeletion(spec, d); err != nil {
			return fmt.Errorf("deletion %d: %w", i, err)
		}
	}
	if err := storage.ValidateCells(spec, cells); err != nil {
		return err
	}
	if n := len(dels) + len(cells); n > bigtableMaxMutations {
		return storage.Invalidf("row %q: %d mutations exceed Bigtable's %d per row", row, n, bigtableMaxMutations)
	}
	return nil
}

// applyRow sends one row's mutation; a mutation without operations (an
// empty Put, a delete of an empty range) sends nothing. Every timestamp is
// explicit, so a repeat is harmless and the call is retried.
func (t *table) applyRow(ctx context.Context, op string, rm rowMutation) error {
	if rm.ops == 0 {
		return t.db.callOnce(ctx, t.step(op, []byte(rm.row)), func(context.Context) error { return nil })
	}
	return t.db.call(ctx, t.step(op, []byte(rm.row)), func(ctx context.Context) error {
		return t.bt.Apply(ctx, rm.row, rm.m)
	})
}

func (rm *rowMutation) addCells(cells []storage.Cell, now int64) {
	if len(cells) > 0 {
		rm.cells = append(rm.cells, cells)
	}
	for i := range cells {
		c := &cells[i]
		ts := c.Timestamp
		if ts == 0 {
			ts = now
		}
		rm.m.Set(c.Family, string(c.Qualifier), bt.Timestamp(ts), c.Value)
		rm.ops++
		rm.bytes += len(c.Family) + len(c.Qualifier) + len(c.Value) + 16
	}
}

// addDeletes appends deletions. Bigtable deletes a column's versions in a
// time range but a family only whole, so a family deletion with a time range
// first reads which of the family's columns have cells in the range and
// deletes the range in each. That read and the write are two requests: a
// column first written in between survives, as if written just after.
func (t *table) addDeletes(ctx context.Context, rm *rowMutation, dels []storage.Deletion) error {
	for _, d := range dels {
		if err := t.addDelete(ctx, rm, d); err != nil {
			return err
		}
	}
	return nil
}

func (t *table) addDelete(ctx context.Context, rm *rowMutation, d storage.Deletion) error {
	if d.Kind == storage.DeleteRow {
		rm.m.DeleteRow() // a row deletion ignores any time range
		rm.count("", "")
		return nil
	}
	ranged := d.MinTime != 0 || d.MaxTime != 0
	lo, hi := ceilMilli(d.MinTime), ceilMilli(d.MaxTime)
	if ranged && hi != 0 && hi <= lo {
		return nil // an empty range deletes nothing
	}
	switch {
	case d.Kind == storage.DeleteFamily && !ranged:
		rm.m.DeleteCellsInFamily(d.Family)
	case d.Kind == storage.DeleteFamily:
		qs, err := t.familyColumns(ctx, rm.row, d.Family, lo, hi)
		if err != nil {
			return err
		}
		for _, q := range rm.pendingColumns(d.Family, qs) {
			rm.m.DeleteTimestampRange(d.Family, q, bt.Timestamp(lo), bt.Timestamp(hi))
			rm.count(d.Family, q)
		}
		return nil
	case !ranged:
		rm.m.DeleteCellsInColumn(d.Family, string(d.Qualifier))
	default:
		rm.m.DeleteTimestampRange(d.Family, string(d.Qualifier), bt.Timestamp(lo), bt.Timestamp(hi))
	}
	rm.count(d.Family, string(d.Qualifier))
	return nil
}

// pendingColumns adds to qs the family's qualifiers this mutation already
// writes (an earlier Mutation of the same row in one Apply), which the read
// of stored columns cannot see yet; each qualifier appears once.
func (rm *rowMutation) pendingColumns(family string, qs []string) []string {
	if len(rm.cells) == 0 {
		return qs
	}
	seen := make(map[string]bool, len(qs))
	for _, q := range qs {
		seen[q] = true
	}
	for _, cells := range rm.cells {
		for i := range cells {
			if q := string(cells[i].Qualifier); cells[i].Family == family && !seen[q] {
				seen[q] = true
				qs = append(qs, q)
			}
		}
	}
	return qs
}

func (rm *rowMutation) count(family, qualifier string) {
	rm.ops++
	rm.bytes += len(family) + len(qualifier) + 16
}

// familyColumns lists the qualifiers of family in row with a cell in
// [lo, hi), reading keys and timestamps only.
func (t *table) familyColumns(ctx context.Context, row, family string, lo, hi int64) ([]string, error) {
	f := bt.ChainFilters(
		bt.ColumnRangeFilter(family, "", ""),
		bt.TimestampRangeFilterMicros(bt.Timestamp(lo), bt.Timestamp(hi)),
		bt.LatestNFilter(1),
		bt.StripValueFilter(),
	)
	var r bt.Row
	err := t.db.call(ctx, t.step("read columns to delete", []byte(row)), func(ctx context.Context) (err error) {
		r, err = t.bt.ReadRow(ctx, row, bt.RowFilter(f))
		return err
	})
	if err != nil {
		return nil, err
	}
	qs := make([]string, 0, len(r[family]))
	for _, it := range r[family] {
		_, q := splitColumn(it.Column)
		qs = append(qs, q)
	}
	return qs, nil
}
