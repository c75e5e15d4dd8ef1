package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// compactRow reads the data row of q, folds its data columns into one when
// it holds several, and then, unless keep, removes the queue entries the
// read covered.
func (c *Compactor) compactRow(ctx context.Context, q *queuedRow, baseSec int64, keep bool, skew time.Duration, st *CompactStats) error {
	readAt := c.f.h.opts.Clock().UnixMilli() * 1000
	fam := c.f.opts.Family
	cells, err := c.f.opts.Table.Get(ctx, q.key, &storage.ReadOptions{Families: []string{fam}})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("ingest: compact: read row %x: %w", q.key, err)
	}
	data := c.mu.data[:0]
	for _, cell := range cells {
		switch rowkey.Classify(cell.Qualifier) {
		case rowkey.ColumnSingle, rowkey.ColumnCompacted, rowkey.ColumnDense:
			data = append(data, cell)
		}
	}
	c.mu.data = data
	if len(data) >= 2 {
		done, err := c.fold(ctx, q.key, baseSec, st)
		if err != nil || !done {
			return err
		}
	}
	if keep {
		return nil
	}
	return c.dropEntries(ctx, q, data, readAt, skew, st, false)
}

// fold writes the points of the data cells in c.mu.data as one column and
// deletes exactly the cell versions read, in one atomic row mutation
// (dense) or a check-and-put and a delete (opentsdb, whose merged column
// may reuse a qualifier another writer also writes). Cells that do not
// decode are left as they are. done is false when another writer changed
// the column meanwhile: the row stays queued.
func (c *Compactor) fold(ctx context.Context, key []byte, baseSec int64, st *CompactStats) (done bool, err error) {
	rc := c.mu.rcells[:0]
	for _, cell := range c.mu.data {
		rc = append(rc, rowkey.Cell{Qualifier: cell.Qualifier, Value: cell.Value, Timestamp: cell.Timestamp})
	}
	c.mu.rcells = rc
	pts, derr := c.mu.dec.Decode(c.mu.pts[:0], baseSec, rc)
	c.mu.pts = pts
	bad := badQualifiers(derr)
	if len(bad) > 0 {
		st.BadCells += int64(len(bad))
		c.f.h.opts.Logger.Warn("ingest: compact: leaving cells that do not decode", "row", fmt.Sprintf("%x", key), "err", derr)
	}
	if len(pts) == 0 {
		return true, nil
	}
	var maxTs int64
	c.mu.dels = c.mu.dels[:0]
	for _, cell := range c.mu.data {
		if isBad(bad, cell.Qualifier) {
			continue
		}
		maxTs = max(maxTs, cell.Timestamp)
		c.mu.dels = append(c.mu.dels, storage.Deletion{
			Kind: storage.DeleteColumn, Family: c.f.opts.Family, Qualifier: cell.Qualifier,
			MinTime: cell.Timestamp, MaxTime: cell.Timestamp + 1000,
		})
	}
	if c.f.opts.Format == uid.FormatOpenTSDB {
		done, err = c.foldOpenTSDB(ctx, key, baseSec, maxTs, st)
	} else {
		done, err = true, c.foldDense(ctx, key, baseSec, maxTs)
	}
	if err == nil && done {
		st.Compacted++
		st.Folded += int64(len(c.mu.dels))
		st.Points += int64(len(pts))
	}
	return done, err
}

// foldDense writes the merged points as dense columns (one per
// MaxDensePoints) with new flush numbers, in the same row mutation that
// deletes the cells read. The new cells carry the newest timestamp read,
// so they rank against later writes as the newest folded cell did.
func (c *Compactor) foldDense(ctx context.Context, key []byte, baseSec, ts int64) error {
	var cells []storage.Cell
	a := c.mu.arena[:0]
	for pts := c.mu.pts; len(pts) > 0; {
		chunk := pts[:min(len(pts), rowkey.MaxDensePoints)]
		pts = pts[len(chunk):]
		seq, err := c.f.seq.take()
		if err != nil {
			return err
		}
		q0 := len(a)
		a = rowkey.AppendDenseQualifier(a, c.f.opts.WriterID, seq)
		v0 := len(a)
		if a, err = c.mu.enc.Append(a, baseSec, chunk); err != nil {
			return fmt.Errorf("ingest: compact: row %x: %w", key, err)
		}
		cells = append(cells, storage.Cell{Family: c.f.opts.Family, Timestamp: ts, Qualifier: a[q0:v0:v0], Value: a[v0:]})
	}
	c.mu.arena = a[:0]
	mut := []storage.Mutation{{Row: key, Deletes: c.mu.dels, Cells: cells}}
	if err := c.f.opts.Table.Apply(ctx, mut); err != nil {
		return fmt.Errorf("ingest: compact: write row %x: %w", key, err)
	}
	return nil
}

// foldOpenTSDB writes the merged points as OpenTSDB's compacted column
// with a check-and-put expecting the version of that qualifier it read (or
// none), then deletes the other cells read. A crash between the two
// leaves duplicates of equal value, which readers merge.
func (c *Compactor) foldOpenTSDB(ctx context.Context, key []byte, baseSec, ts int64, st *CompactStats) (bool, error) {
	q, v, err := rowkey.AppendCompacted(nil, nil, baseSec, c.mu.pts)
	if err != nil {
		return false, fmt.Errorf("ingest: compact: row %x: %w", key, err)
	}
	var expected []byte
	for _, cell := range c.mu.data { // newest version first: storage order
		if bytes.Equal(cell.Qualifier, q) {
			expected = cell.Value
			break
		}
	}
	cell := []storage.Cell{{Family: c.f.opts.Family, Qualifier: q, Timestamp: ts, Value: v}}
	err = c.f.opts.Table.CheckAndPut(ctx, key, c.f.opts.Family, q, expected, cell)
	if errors.Is(err, storage.ErrConflict) {
		st.Conflicts++
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ingest: compact: write row %x: %w", key, err)
	}
	// The put replaced the version (q, ts) if the row had it: keep it.
	dels := c.mu.dels[:0]
	for _, d := range c.mu.dels {
		if !(bytes.Equal(d.Qualifier, q) && d.MinTime == ts) {
			dels = append(dels, d)
		}
	}
	c.mu.dels = dels
	if err := c.f.opts.Table.Delete(ctx, key, dels...); err != nil {
		return false, fmt.Errorf("ingest: compact: delete folded cells of row %x: %w", key, err)
	}
	return true, nil
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
				Kind: storage.DeleteColumn, Family: uid.MetaFamilyCompaction, Qualifier: e.Qualifier,
				MinTime: e.Timestamp, MaxTime: e.Timestamp + 1000,
			})
		}
	}
	if len(dels) == 0 {
		return nil
	}
	row := append(bytes.Clone(uid.MetaCompactionPrefix), q.key...)
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

// badQualifiers lists the qualifiers of the *rowkey.CellError in err.
func badQualifiers(err error) [][]byte {
	if err == nil {
		return nil
	}
	var out [][]byte
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *rowkey.CellError
		if errors.As(e, &ce) {
			out = append(out, ce.Qualifier)
		}
	}
	return out
}

func isBad(bad [][]byte, q []byte) bool {
	for _, b := range bad {
		if bytes.Equal(b, q) {
			return true
		}
	}
	return false
}
