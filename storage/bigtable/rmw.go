package bigtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	bt "cloud.google.com/go/bigtable"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/storage"
)

// Increment adds delta to an 8-byte big-endian counter with Bigtable's
// ReadModifyWrite. It is sent once: a repeat after an unknown outcome could
// add delta twice.
func (t *table) Increment(ctx context.Context, row []byte, family string, qualifier []byte, delta int64) (int64, error) {
	rmw := bt.NewReadModifyWrite()
	rmw.Increment(family, string(qualifier), delta)
	v, err := t.readModifyWrite(ctx, "increment", row, family, qualifier, rmw)
	if err != nil {
		return 0, t.incrementError(ctx, row, family, qualifier, err)
	}
	if len(v) != 8 {
		return 0, invariants.AssertionFailedf("bigtable: increment %s row %q: server returned %d bytes", t.name, row, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// Append appends value to the newest version of the column with Bigtable's
// ReadModifyWrite and returns the new value. It is sent once.
func (t *table) Append(ctx context.Context, row []byte, family string, qualifier []byte, value []byte) ([]byte, error) {
	rmw := bt.NewReadModifyWrite()
	rmw.AppendValue(family, string(qualifier), value)
	return t.readModifyWrite(ctx, "append", row, family, qualifier, rmw)
}

// readModifyWrite validates, drops expired cells of the column, applies rmw
// and returns the column's new value.
func (t *table) readModifyWrite(ctx context.Context, op string, row []byte, family string, qualifier []byte,
	rmw *bt.ReadModifyWrite) ([]byte, error) {
	if err := t.validateColumn(row, family); err != nil {
		return nil, err
	}
	if err := t.dropExpired(ctx, row, family, qualifier); err != nil {
		return nil, err
	}
	var r bt.Row
	err := t.db.callOnce(ctx, t.step(op, row), func(ctx context.Context) (err error) {
		r, err = t.bt.ApplyReadModifyWrite(ctx, string(row), rmw)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, it := range r[family] {
		if _, q := splitColumn(it.Column); q == string(qualifier) {
			return it.Value, nil
		}
	}
	return nil, invariants.AssertionFailedf("bigtable: %s %s row %q: no cell in the reply", op, t.name, row)
}

func (t *table) validateColumn(row []byte, family string) error {
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	return storage.ValidateFamily(t.Spec(), family)
}

// dropExpired deletes the column's cells when all are past the family's
// TTL. ReadModifyWrite builds on the newest cell even if garbage collection
// has not removed it yet, while the contract counts an expired cell as
// absent. The check and the delete are one atomic CheckAndMutate, so a live
// cell is never deleted; it costs one extra request, only in families with
// a TTL.
func (t *table) dropExpired(ctx context.Context, row []byte, family string, qualifier []byte) error {
	f, _ := t.Spec().Family(family)
	if f.TTL <= 0 {
		return nil
	}
	del := bt.NewMutation()
	del.DeleteCellsInColumn(family, string(qualifier))
	m := bt.NewCondMutation(t.visibleColumn(f, qualifier), nil, del)
	return t.db.call(ctx, t.step("drop expired cells", row), func(ctx context.Context) error {
		return t.bt.Apply(ctx, string(row), m)
	})
}

// visibleColumn matches the column's cells the read-time limits show.
func (t *table) visibleColumn(f storage.FamilySpec, qualifier []byte) bt.Filter {
	q := string(qualifier)
	fs := []bt.Filter{bt.ColumnRangeFilter(f.Name, q, q+"\x00")}
	if f.TTL > 0 {
		fs = append(fs, bt.TimestampRangeFilterMicros(bt.Timestamp(ttlCutoff(t.db.nowTimestamp(), f.TTL)), 0))
	}
	return chainOf(fs)
}

// incrementError explains a failed increment. Bigtable refuses to
// increment a cell that is not 8 bytes, but the emulator reports that with
// code Unknown; when the failure is not transient, the column is read and a
// wrong-sized newest value becomes ErrInvalidArgument.
func (t *table) incrementError(ctx context.Context, row []byte, family string, qualifier []byte, err error) error {
	if storage.IsRetryable(err) || errors.Is(err, storage.ErrNotFound) || ctx.Err() != nil || t.db.closed.Load() {
		return err
	}
	v, ok, rerr := t.newestValue(ctx, row, family, qualifier)
	if rerr == nil && ok && len(v) != 8 {
		return storage.Invalidf("increment %s row %q column %s:%q: value of %d bytes is not an 8-byte counter",
			t.name, row, family, qualifier, len(v))
	}
	return err
}

// newestValue reads the newest visible value of a column.
func (t *table) newestValue(ctx context.Context, row []byte, family string, qualifier []byte) ([]byte, bool, error) {
	cells, err := t.Get(ctx, row, &storage.ReadOptions{
		Families: []string{family}, Qualifiers: [][]byte{qualifier}, MaxVersions: 1,
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return cells[0].Value, true, nil
}

// CheckAndPut writes cells if the newest visible version of the column
// equals expected (nil: the column is absent), as one CheckAndMutate: the
// predicate is the visible column, narrowed for a value to its newest cell
// and the one-value range [expected, expected+"\x00"). It is sent once.
func (t *table) CheckAndPut(ctx context.Context, row []byte, family string, qualifier []byte, expected []byte, cells []storage.Cell) error {
	if err := t.validateColumn(row, family); err != nil {
		return err
	}
	if err := t.validateWrite(row, nil, cells); err != nil {
		return err
	}
	if len(cells) == 0 {
		return t.checkOnly(ctx, row, family, qualifier, expected)
	}
	f, _ := t.Spec().Family(family)
	rm := rowMutation{row: string(row), m: bt.NewMutation()}
	rm.addCells(cells, t.db.nowTimestamp())
	cond := t.visibleColumn(f, qualifier)
	var m *bt.Mutation
	if expected == nil {
		m = bt.NewCondMutation(cond, nil, rm.m)
	} else {
		end := append(bytes.Clone(expected), 0)
		cond = bt.ChainFilters(cond, bt.LatestNFilter(1), bt.ValueRangeFilter(bytes.Clone(expected), end))
		m = bt.NewCondMutation(cond, rm.m, nil)
	}
	var matched bool
	err := t.db.callOnce(ctx, t.step("check-and-put", row), func(ctx context.Context) error {
		return t.bt.Apply(ctx, string(row), m, bt.GetCondMutationResult(&matched))
	})
	if err != nil {
		return err
	}
	if matched == (expected == nil) {
		return t.conflict(row, family, qualifier)
	}
	return nil
}

// checkOnly answers a CheckAndPut with nothing to write by one read, which
// is atomic on its own.
func (t *table) checkOnly(ctx context.Context, row []byte, family string, qualifier []byte, expected []byte) error {
	v, ok, err := t.newestValue(ctx, row, family, qualifier)
	if err != nil {
		return err
	}
	if ok != (expected != nil) || !bytes.Equal(v, expected) {
		return t.conflict(row, family, qualifier)
	}
	return nil
}

func (t *table) conflict(row []byte, family string, qualifier []byte) error {
	return fmt.Errorf("bigtable: check-and-put %s row %q column %s:%q: %w", t.name, row, family, qualifier, storage.ErrConflict)
}
