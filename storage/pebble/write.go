package pebble

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

// keyBuf holds scratch key buffers for one call.
type keyBuf struct{ a, b []byte }

var keyBufPool = sync.Pool{New: func() any {
	return &keyBuf{a: make([]byte, 0, 128), b: make([]byte, 0, 128)}
}}

func getKeyBuf() *keyBuf  { return keyBufPool.Get().(*keyBuf) }
func putKeyBuf(k *keyBuf) { keyBufPool.Put(k) }

// Put writes cells to one row in one synced pebble batch.
func (t *table) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := t.beginWrite()
	if err != nil {
		return err
	}
	defer t.db.leave()
	if err := validateCells(st, row, cells); err != nil {
		return fmt.Errorf("put table %q row %q: %w", t.name, row, err)
	}
	b := t.db.pdb.NewBatch()
	defer b.Close()
	kb := getKeyBuf()
	defer putKeyBuf(kb)
	t.addPuts(b, kb, row, cells, t.db.cellClock(cells))
	l := t.db.rows.lock(t.id, row)
	l.RLock()
	err = t.db.commit(b, t.db.wo)
	l.RUnlock()
	if err != nil {
		return fmt.Errorf("put table %q row %q: %w", t.name, row, err)
	}
	return nil
}

// cellClock returns now for cells that need it (a zero timestamp), else 0.
func (d *DB) cellClock(cells []storage.Cell) int64 {
	for i := range cells {
		if cells[i].Timestamp == 0 {
			return d.nowMicros()
		}
	}
	return 0
}

// validateCells checks a row key and the cells to write to it.
func validateCells(st *tableState, row []byte, cells []storage.Cell) error {
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	return storage.ValidateCells(st.spec, cells)
}

// addPuts adds one Set per cell; a zero timestamp becomes now.
func (t *table) addPuts(b *pebble.Batch, kb *keyBuf, row []byte, cells []storage.Cell, now int64) {
	kb.a = appendRowPrefix(kb.a[:0], t.id, row)
	n := len(kb.a)
	for i := range cells {
		c := &cells[i]
		ts := c.Timestamp
		if ts == 0 {
			ts = now
		}
		kb.a = appendColumnPrefix(kb.a[:n], c.Family, c.Qualifier)
		kb.a = appendTimestamp(kb.a, ts)
		_ = b.Set(kb.a, c.Value, nil)
	}
}

// Apply writes many rows in one synced pebble batch, so each row is atomic
// (the whole batch is, too, though callers may not rely on it).
func (t *table) Apply(ctx context.Context, muts []storage.Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := t.beginWrite()
	if err != nil {
		return err
	}
	defer t.db.leave()
	if err := t.validateMutations(st, muts); err != nil {
		return err
	}
	b := t.db.pdb.NewBatch()
	defer b.Close()
	rows, err := t.addMutations(ctx, b, muts)
	if err != nil {
		return err
	}
	t.db.rows.rlockSet(rows)
	err = t.db.commit(b, t.db.wo)
	t.db.rows.runlockSet(rows)
	putRowSet(rows)
	if err != nil {
		return fmt.Errorf("apply to table %q: %w", t.name, err)
	}
	return nil
}

func (t *table) validateMutations(st *tableState, muts []storage.Mutation) error {
	for i := range muts {
		m := &muts[i]
		if err := validateCells(st, m.Row, m.Cells); err != nil {
			return fmt.Errorf("apply to table %q: mutation %d row %q: %w", t.name, i, m.Row, err)
		}
		for _, d := range m.Deletes {
			if err := storage.ValidateDeletion(st.spec, d); err != nil {
				return fmt.Errorf("apply to table %q: mutation %d row %q: %w", t.name, i, m.Row, err)
			}
		}
	}
	return nil
}

var rowSetPool = sync.Pool{New: func() any { return new(rowSet) }}

func putRowSet(s *rowSet) {
	*s = rowSet{}
	rowSetPool.Put(s)
}

// ApplyGroup implements storage.GroupApplier: every group's mutations in
// one synced pebble batch, when each group's table is a table of t's
// store.
func (t *table) ApplyGroup(ctx context.Context, groups []storage.TableMutations) (bool, error) {
	tables := make([]*table, len(groups))
	for i, g := range groups {
		gt, ok := g.Table.(*table)
		if !ok || gt.db != t.db {
			return false, nil
		}
		tables[i] = gt
	}
	if err := ctx.Err(); err != nil {
		return true, err
	}
	for i, gt := range tables {
		st, err := gt.beginWrite()
		if err != nil {
			return true, err
		}
		defer gt.db.leave()
		if err := gt.validateMutations(st, groups[i].Muts); err != nil {
			return true, err
		}
	}
	b := t.db.pdb.NewBatch()
	defer b.Close()
	rows := rowSetPool.Get().(*rowSet)
	defer putRowSet(rows)
	for i, gt := range tables {
		if err := gt.addMutationsTo(ctx, b, groups[i].Muts, rows); err != nil {
			return true, err
		}
	}
	t.db.rows.rlockSet(rows)
	err := t.db.commit(b, t.db.wo)
	t.db.rows.runlockSet(rows)
	if err != nil {
		return true, fmt.Errorf("apply to %d tables: %w", len(groups), err)
	}
	return true, nil
}

// addMutations adds every mutation to b and returns the stripes they touch.
func (t *table) addMutations(ctx context.Context, b *pebble.Batch, muts []storage.Mutation) (*rowSet, error) {
	rows := rowSetPool.Get().(*rowSet)
	if err := t.addMutationsTo(ctx, b, muts, rows); err != nil {
		putRowSet(rows)
		return nil, err
	}
	return rows, nil
}

// addMutationsTo adds every mutation to b and the stripes they touch to
// rows.
func (t *table) addMutationsTo(ctx context.Context, b *pebble.Batch, muts []storage.Mutation, rows *rowSet) error {
	kb := getKeyBuf()
	defer putKeyBuf(kb)
	var now int64
	for i := range muts {
		if now == 0 {
			now = t.db.cellClock(muts[i].Cells)
		}
		m := &muts[i]
		if len(m.Deletes) > 0 {
			if err := t.addDeletes(ctx, b, kb, m.Row, m.Deletes); err != nil {
				return fmt.Errorf("apply to table %q: mutation %d row %q: %w", t.name, i, m.Row, err)
			}
		}
		t.addPuts(b, kb, m.Row, m.Cells, now)
		rows.add(t.db.rows.index(t.id, m.Row))
	}
	return nil
}

// Delete removes cells of one row in one synced batch; no deletions means
// the whole row. Range deletions hide only what is already written, so a
// later put, even with an older timestamp, is visible again.
func (t *table) Delete(ctx context.Context, row []byte, dels ...storage.Deletion) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := t.beginWrite()
	if err != nil {
		return err
	}
	defer t.db.leave()
	if err := t.validateDelete(st, row, dels); err != nil {
		return err
	}
	if len(dels) == 0 {
		dels = []storage.Deletion{{Kind: storage.DeleteRow}}
	}
	b := t.db.pdb.NewBatch()
	defer b.Close()
	kb := getKeyBuf()
	defer putKeyBuf(kb)
	if err := t.addDeletes(ctx, b, kb, row, dels); err != nil {
		return fmt.Errorf("delete from table %q row %q: %w", t.name, row, err)
	}
	l := t.db.rows.lock(t.id, row)
	l.RLock()
	err = t.db.commit(b, t.db.wo)
	l.RUnlock()
	if err != nil {
		return fmt.Errorf("delete from table %q row %q: %w", t.name, row, err)
	}
	return nil
}

func (t *table) validateDelete(st *tableState, row []byte, dels []storage.Deletion) error {
	if err := storage.ValidateRow(row); err != nil {
		return fmt.Errorf("delete from table %q: %w", t.name, err)
	}
	for _, d := range dels {
		if err := storage.ValidateDeletion(st.spec, d); err != nil {
			return fmt.Errorf("delete from table %q row %q: %w", t.name, row, err)
		}
	}
	return nil
}

// addDeletes adds the deletions of one row to b.
func (t *table) addDeletes(ctx context.Context, b *pebble.Batch, kb *keyBuf, row []byte, dels []storage.Deletion) error {
	kb.a = appendRowPrefix(kb.a[:0], t.id, row)
	n := len(kb.a)
	for _, d := range dels {
		kb.a = kb.a[:n]
		var err error
		switch d.Kind {
		case storage.DeleteRow:
			err = deletePrefix(b, kb, kb.a)
		case storage.DeleteFamily:
			err = t.deleteFamily(ctx, b, kb, d)
		case storage.DeleteColumn:
			kb.a = appendColumnPrefix(kb.a, d.Family, d.Qualifier)
			err = deleteColumn(b, kb, kb.a, d.MinTime, d.MaxTime)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deletePrefix range-deletes every key starting with p.
func deletePrefix(b *pebble.Batch, kb *keyBuf, p []byte) error {
	kb.b = prefixSuccessor(kb.b, p)
	return b.DeleteRange(p, kb.b, nil)
}

// deleteColumn range-deletes the versions of a column (prefix col) with
// timestamps in [minT, maxT); both zero means all versions.
func deleteColumn(b *pebble.Batch, kb *keyBuf, col []byte, minT, maxT int64) error {
	if minT == 0 && maxT == 0 {
		return deletePrefix(b, kb, col)
	}
	lo, hi := columnTimeBounds(col, kb.b[:0], minT, maxT)
	kb.b = hi
	if bytes.Compare(lo, hi) >= 0 {
		return nil
	}
	if singleMilli(minT, maxT) {
		// One version: a point tombstone. Range tombstones pile up in the
		// memtable and every new iterator re-fragments them all, so the
		// compactor's exact-version deletes (one per queue entry and
		// folded column) made each later read cost O(deletes so far).
		return b.Delete(lo, nil)
	}
	return b.DeleteRange(lo, hi, nil)
}

// singleMilli reports whether [minT, maxT) µs holds exactly one whole
// millisecond, the one timestamp a version key can carry in it.
func singleMilli(minT, maxT int64) bool {
	if maxT <= 0 || minT < 0 {
		return false
	}
	return (maxT-1)/1000 == (minT+999)/1000
}

// columnTimeBounds returns the key range [lo, hi) of a column's versions
// with timestamps in [minT, maxT) (maxT 0 is unbounded); it is empty (lo >=
// hi) when no whole millisecond lies in the range. lo extends col.
func columnTimeBounds(col, hiBuf []byte, minT, maxT int64) (lo, hi []byte) {
	lo = col
	if maxT > 0 {
		lo = appendTimestamp(col, maxT-1) // floor: the newest ts below maxT
	}
	if minT%1000 != 0 {
		if minT > (maxMillis-1)*1000 {
			return lo, append(hiBuf, col...) // no timestamp reaches minT
		}
		minT += 1000 - minT%1000 // ceil: the oldest ts at or above minT
	}
	hi = appendTimestamp(append(hiBuf, col...), minT)
	hi = append(hi, 0)
	return lo, hi
}

// deleteFamily removes a family of the row in kb.a; with a time range it
// point-deletes the matching versions it finds.
func (t *table) deleteFamily(ctx context.Context, b *pebble.Batch, kb *keyBuf, d storage.Deletion) error {
	kb.a = append(append(kb.a, d.Family...), famTerm)
	if d.MinTime == 0 && d.MaxTime == 0 {
		return deletePrefix(b, kb, kb.a)
	}
	kb.b = prefixSuccessor(kb.b, kb.a)
	it, err := t.db.pdb.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: kb.a, UpperBound: kb.b})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		ts := keyTimestamp(it.Key())
		if ts >= d.MinTime && (d.MaxTime == 0 || ts < d.MaxTime) {
			_ = b.Delete(it.Key(), nil)
		}
	}
	return it.Close()
}

// DeleteRange removes every row in [start, stop) of the table with one range
// deletion; nil bounds are the table's ends.
func (t *table) DeleteRange(ctx context.Context, start, stop []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := t.beginWrite(); err != nil {
		return err
	}
	defer t.db.leave()
	if start != nil && stop != nil && bytes.Compare(start, stop) > 0 {
		return fmt.Errorf("delete range of table %q: %w", t.name,
			storage.Invalidf("start %q after stop %q", start, stop))
	}
	lo, hi := t.rowBounds(nil, nil, start, stop)
	if bytes.Compare(lo, hi) >= 0 {
		return nil
	}
	b := t.db.pdb.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(lo, hi, nil)
	if err := t.db.commit(b, t.db.wo); err != nil {
		return fmt.Errorf("delete range of table %q: %w", t.name, err)
	}
	return nil
}

// rowBounds returns the key range of rows in [start, stop), appending to lo
// and hi; empty or nil bounds are the table's ends.
func (t *table) rowBounds(lo, hi, start, stop []byte) ([]byte, []byte) {
	if len(start) == 0 {
		lo = appendTablePrefix(lo[:0], t.id)
	} else {
		lo = appendRowPrefix(lo[:0], t.id, start)
	}
	if len(stop) == 0 {
		hi = appendTablePrefix(hi[:0], t.id+1)
	} else {
		hi = appendRowPrefix(hi[:0], t.id, stop)
	}
	return lo, hi
}
