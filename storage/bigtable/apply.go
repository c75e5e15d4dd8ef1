package bigtable

import (
	"context"
	"fmt"
	"slices"

	bt "cloud.google.com/go/bigtable"

	"github.com/tsd-db/tsd/storage"
)

// Apply writes many rows through ApplyBulk, in requests of at most
// BulkMaxMutations mutations and about BulkMaxBytes bytes. Each row is
// atomic; the batch is not. Every mutation is checked before any is sent.
// Rows that fail with a retryable error are retried alone.
func (t *table) Apply(ctx context.Context, muts []storage.Mutation) error {
	for i := range muts {
		if err := t.validateWrite(muts[i].Row, muts[i].Deletes, muts[i].Cells); err != nil {
			return fmt.Errorf("apply %s mutation %d: %w", t.name, i, err)
		}
	}
	rows, err := t.rowMutations(ctx, muts)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return t.db.callOnce(ctx, "apply "+t.name, func(context.Context) error { return nil })
	}
	for len(rows) > 0 {
		n := t.chunkLen(rows)
		if err := t.applyChunk(ctx, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// rowMutations builds each row's mutation, skipping rows with nothing to
// do. Mutations of one row are merged into one entry, in order: Bigtable
// applies a request's entries in any order, which would let an earlier
// write of the same row and timestamp win.
func (t *table) rowMutations(ctx context.Context, muts []storage.Mutation) ([]rowMutation, error) {
	now := t.db.nowTimestamp()
	rows := make([]rowMutation, 0, len(muts))
	index := make(map[string]int, len(muts))
	for i := range muts {
		key := string(muts[i].Row)
		j, seen := index[key]
		if !seen {
			j = len(rows)
			index[key] = j
			rows = append(rows, rowMutation{row: key, m: bt.NewMutation()})
		}
		rm := &rows[j]
		if err := t.addDeletes(ctx, rm, muts[i].Deletes); err != nil {
			return nil, err
		}
		rm.addCells(muts[i].Cells, now)
		if rm.ops > bigtableMaxMutations {
			return nil, storage.Invalidf("apply %s row %q: %d mutations exceed Bigtable's %d per row", t.name, key, rm.ops, bigtableMaxMutations)
		}
	}
	return slices.DeleteFunc(rows, func(rm rowMutation) bool { return rm.ops == 0 }), nil
}

// chunkLen is how many leading rows fit one ApplyBulk request; always at
// least one, since one row alone is within Bigtable's limits by validation.
func (t *table) chunkLen(rows []rowMutation) int {
	ops, size := 0, 0
	for i, rm := range rows {
		ops += rm.ops
		size += rm.bytes + len(rm.row)
		if i > 0 && (ops > t.db.opts.BulkMaxMutations || size > t.db.opts.BulkMaxBytes) {
			return i
		}
	}
	return len(rows)
}

// applyChunk sends one request's rows, retrying the rows that failed with a
// retryable error.
func (t *table) applyChunk(ctx context.Context, rows []rowMutation) error {
	step := "apply " + t.name
	var err error
	for attempt := 0; attempt < t.db.opts.MaxAttempts; attempt++ {
		if attempt > 0 && !t.db.pause(ctx, attempt) {
			return t.db.classify(ctx, step, err)
		}
		rows, err = t.applyBulkOnce(ctx, step, rows)
		if !storage.IsRetryable(err) {
			return err
		}
	}
	return err
}

// applyBulkOnce sends rows in one ApplyBulk and returns the rows that
// failed. The error is retryable only when every failure is.
func (t *table) applyBulkOnce(ctx context.Context, step string, rows []rowMutation) ([]rowMutation, error) {
	keys := make([]string, len(rows))
	ms := make([]*bt.Mutation, len(rows))
	for i := range rows {
		keys[i], ms[i] = rows[i].row, rows[i].m
	}
	var errs []error
	err := t.db.callOnce(ctx, step, func(ctx context.Context) (err error) {
		errs, err = t.bt.ApplyBulk(ctx, keys, ms)
		return err
	})
	if err != nil || errs == nil {
		return rows, err
	}
	return t.rowFailures(ctx, step, rows, errs)
}

// rowFailures collects the failed rows of an ApplyBulk and picks the error
// to report: the first one that retrying cannot fix, else the first one.
func (t *table) rowFailures(ctx context.Context, step string, rows []rowMutation, errs []error) ([]rowMutation, error) {
	var failed []rowMutation
	var first, fatal error
	for i, e := range errs {
		if e == nil {
			continue
		}
		failed = append(failed, rows[i])
		ce := t.db.classify(ctx, fmt.Sprintf("%s row %q", step, rows[i].row), e)
		if first == nil {
			first = ce
		}
		if fatal == nil && !storage.IsRetryable(ce) {
			fatal = ce
		}
	}
	if fatal != nil {
		first = fatal
	}
	if first == nil {
		return nil, nil
	}
	err := fmt.Errorf("%d of %d rows failed, first: %w", len(failed), len(rows), first)
	return failed, err
}
