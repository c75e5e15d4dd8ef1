package flush

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// compactRow reads the data row of q, folds its data columns into one when
// it holds several, and then, unless keep, removes the queue entries the
// read covered.
func (c *Compactor) compactRow(ctx context.Context, q *queuedRow, baseSec int64, keep bool, skew time.Duration, st *CompactStats) error {
	readAt := c.f.hopts.Clock().UnixMilli() * 1000
	data, err := c.mu.fold.read(ctx, q.key)
	if err != nil {
		return err
	}
	if len(data) >= 2 {
		res, err := c.mu.fold.fold(ctx, q.key, baseSec)
		st.add(res.stats())
		if err != nil || res.conflict {
			return err
		}
	}
	if err := c.rollups(ctx, q.key, baseSec, len(data) >= 2); err != nil {
		return err // the entries stay: the next round computes them again
	}
	if keep {
		return nil
	}
	return c.dropEntries(ctx, q, data, readAt, skew, st, false)
}

// rollups writes the rollup cells of the row just compacted (or read).
func (c *Compactor) rollups(ctx context.Context, key []byte, baseSec int64, _ bool) error {
	if c.f.roll == nil || len(c.mu.fold.data) == 0 {
		return nil
	}
	return c.f.roll.compacted(ctx, key, baseSec, c.f.hopts.Clock().UnixMilli()*1000)
}

// dropEntries deletes the exact versions of the queue entries of q that
// name a column among data (folded now or already alone), or that are
// older than the read by skew (their column is gone: folded earlier, or
// expired), or all of them with all. Entries written since the queue was
// read survive.
//
// Why an entry whose column is missing is stale: its writer wrote the
// column before the entry, and the queue is read before the row, so the
// column was there for the row read unless it was deleted. Skew covers
// stores that do not order reads of two tables that strictly.
func (c *Compactor) dropEntries(ctx context.Context, q *queuedRow, data []storage.Cell, readAt int64, skew time.Duration, st *CompactStats, all bool) error {
	var dels []storage.Deletion
	for _, e := range q.entries {
		if all || hasQualifier(data, e.Qualifier) || e.Timestamp <= readAt-skew.Microseconds() {
			dels = append(dels, storage.Deletion{
				Kind: storage.DeleteColumn, Family: schema.MetaFamilyCompaction, Qualifier: e.Qualifier,
				MinTime: e.Timestamp, MaxTime: e.Timestamp + 1000,
			})
		}
	}
	if len(dels) == 0 {
		return nil
	}
	row := append(bytes.Clone(schema.MetaCompactionPrefix), q.key...)
	if err := c.f.opts.Meta.Delete(ctx, row, dels...); err != nil {
		return fmt.Errorf("ingest: compact: remove queue entries of row %x: %w", q.key, err)
	}
	st.Entries += int64(len(dels))
	return nil
}

func hasQualifier(cells []storage.Cell, q []byte) bool {
	for _, c := range cells {
		if bytes.Equal(c.Qualifier, q) {
			return true
		}
	}
	return false
}
