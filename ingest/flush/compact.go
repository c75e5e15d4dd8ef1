package flush

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// Default compaction option values.
const (
	DefaultCompactInterval      = 10 * time.Second
	DefaultCompactRowsPerSecond = 1000
	DefaultCompactBatchRows     = 128
	DefaultCompactSkew          = time.Minute
)

// CompactOptions configure a Compactor. The zero value is usable after
// EnsureDefaults.
type CompactOptions struct {
	// Interval is how often a started Compactor reads the queue. Default
	// 10 s.
	Interval time.Duration
	// RowsPerSecond caps the rows compacted per second (a token bucket),
	// so the merge work spreads out. Drain is not capped. Default 1,000;
	// negative is unlimited.
	RowsPerSecond float64
	// BatchRows is how many queued rows one queue scan reads. Default 128.
	BatchRows int
	// Skew is the clock difference between writers sharing the store that
	// the compactor allows for: a queue entry naming a column the row does
	// not hold is dropped only when it is older than the row read by this
	// much (the column was compacted or expired meanwhile). Default 1 min.
	Skew time.Duration
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *CompactOptions) EnsureDefaults() *CompactOptions {
	if o.Interval == 0 {
		o.Interval = DefaultCompactInterval
	}
	if o.RowsPerSecond == 0 {
		o.RowsPerSecond = DefaultCompactRowsPerSecond
	}
	if o.BatchRows == 0 {
		o.BatchRows = DefaultCompactBatchRows
	}
	if o.Skew == 0 {
		o.Skew = DefaultCompactSkew
	}
	return o
}

// Validate reports an option out of range.
func (o *CompactOptions) Validate() error {
	if o.Interval < 0 || o.BatchRows < 0 || o.Skew < 0 {
		return fmt.Errorf("ingest: compact: negative interval %v, batch %d or skew %v", o.Interval, o.BatchRows, o.Skew)
	}
	return nil
}

// CompactStats count what one Compact did.
type CompactStats struct {
	// Rows counts the queued rows looked at; Waiting those left for a
	// later round because their hour is not complete yet.
	Rows, Waiting int64
	// Compacted counts the rows rewritten as one column, Folded the data
	// columns they replaced and Points the points written.
	Compacted, Folded, Points int64
	// Entries counts the queue entries removed.
	Entries int64
	// BadCells counts data cells that did not decode, left untouched.
	BadCells int64
	// Conflicts counts opentsdb-format rows another writer changed while
	// they were compacted; they stay queued.
	Conflicts int64
	// Errors counts queued rows whose compaction failed (a read, write
	// or delete of the store); they stay queued.
	Errors int64
	// Queued is how many queue entries the last round read: the queue's
	// length then (OpenTSDB's compaction.queue.size). Stats reports the
	// last round's, not a sum.
	Queued int64
	// OldestMs is the hour (base, ms) of the oldest row the last round
	// found queued, 0 with none: how far compaction is behind. Stats
	// reports the last round's.
	OldestMs int64
	// Identical and Variant count the points compacted rows held twice
	// (two columns with one timestamp): with the same value, and with
	// different values, of which the newest column's was kept
	// (OpenTSDB's compaction.duplicates type=identical and type=variant).
	Identical, Variant int64
}

func (s *CompactStats) add(o CompactStats) {
	s.Rows += o.Rows
	s.Waiting += o.Waiting
	s.Compacted += o.Compacted
	s.Folded += o.Folded
	s.Points += o.Points
	s.Entries += o.Entries
	s.BadCells += o.BadCells
	s.Conflicts += o.Conflicts
	s.Errors += o.Errors
	s.Identical += o.Identical
	s.Variant += o.Variant
}

// Compactor merges the columns of queued rows into one column in the
// table's format: it reads a queued row, merges every data column with
// rowkey.RowDecoder, writes one column (dense: a new qualifier with this
// writer's id and a new flush number; opentsdb: OpenTSDB's compacted column)
// and deletes exactly the cell versions it read, so columns that another
// writer adds meanwhile survive. Then it removes the queue entries that
// named the columns it folded. It is safe for concurrent use; compactions
// run one at a time.
type Compactor struct {
	f     *Flusher
	opts  CompactOptions
	limit *limiter
	loop  struct {
		cancel context.CancelFunc
		wg     sync.WaitGroup
	}
	total struct { // what every compaction did
		sync.Mutex
		st CompactStats
	}

	mu struct {
		sync.Mutex
		queued []queuedRow
		fold   rowFolder
	}
}

// queuedRow is one row of the queue: the data row key and its entries.
type queuedRow struct {
	key     []byte
	entries []storage.Cell // Qualifier and Timestamp
}

// NewCompactor returns a compactor of the rows f queues. f must have a
// Meta table.
func (f *Flusher) NewCompactor(opts *CompactOptions) (*Compactor, error) {
	if f.opts.Meta == nil {
		return nil, errors.New("ingest: compact: the flusher has no meta table (FlushOptions.Meta)")
	}
	c := &Compactor{f: f}
	if opts != nil {
		c.opts = *opts
	}
	if err := c.opts.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	c.limit = newLimiter(c.opts.RowsPerSecond)
	c.mu.fold.init(&f.opts, f.seq, f.hopts.Logger)
	return c, nil
}

// Compact compacts the queued rows whose hour is complete at now (over for
// the flush grace), paced by the rate limit. With drain it compacts every
// queued row at once, unpaced: rows whose hour is not over are compacted
// too but stay queued, since more points may come for them after a
// restart. It returns the first error after trying every row.
func (c *Compactor) Compact(ctx context.Context, now time.Time, drain bool) (st CompactStats, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		c.total.Lock()
		c.total.st.add(st)
		c.total.st.Queued = st.Queued // a length, not a count
		c.total.st.OldestMs = st.OldestMs
		c.total.Unlock()
	}()
	var errs []error
	start := schema.MetaCompactionPrefix
	for start != nil {
		next, err := c.readQueue(ctx, start)
		if err != nil {
			return st, errors.Join(append(errs, err)...)
		}
		st.Queued += int64(len(c.mu.queued))
		for i := range c.mu.queued {
			if err := c.compactQueued(ctx, &c.mu.queued[i], now, drain, &st); err != nil {
				if ctx.Err() != nil {
					return st, ctx.Err()
				}
				st.Errors++
				errs = append(errs, err)
			}
		}
		start = next
	}
	return st, errors.Join(errs...)
}

// Stats returns what every compaction so far did, for tsd's own metrics.
func (c *Compactor) Stats() CompactStats {
	c.total.Lock()
	defer c.total.Unlock()
	return c.total.st
}

// Drain compacts every queued row at once (Compact with drain), and drops
// the entries whose column is gone without waiting for Skew. At shutdown
// call it after stopping the loops and the final Flush(ctx, now, true).
func (c *Compactor) Drain(ctx context.Context) (CompactStats, error) {
	return c.Compact(ctx, c.f.hopts.Clock(), true)
}

// readQueue reads up to BatchRows queue rows from start into c.mu.queued
// and returns where the next read starts (nil at the end).
func (c *Compactor) readQueue(ctx context.Context, start []byte) ([]byte, error) {
	c.mu.queued = c.mu.queued[:0]
	stop := []byte{schema.MetaCompactionPrefix[0] + 1}
	sc := c.f.opts.Meta.Scan(ctx, &storage.ScanOptions{
		Start: start, Stop: stop, Limit: c.opts.BatchRows,
		ReadOptions: storage.ReadOptions{Families: []string{schema.MetaFamilyCompaction}},
	})
	for sc.Next() {
		row := sc.Row()
		n := len(c.mu.queued)
		if n == 0 || !bytes.Equal(c.mu.queued[n-1].key, row.Key[len(schema.MetaCompactionPrefix):]) {
			c.mu.queued = append(c.mu.queued, queuedRow{key: bytes.Clone(row.Key[len(schema.MetaCompactionPrefix):])})
			n++
		}
		q := &c.mu.queued[n-1]
		for _, cell := range row.Cells {
			q.entries = append(q.entries, storage.Cell{Qualifier: bytes.Clone(cell.Qualifier), Timestamp: cell.Timestamp})
		}
	}
	if err := sc.Close(); err != nil {
		return nil, fmt.Errorf("ingest: compact: read queue: %w", err)
	}
	if len(c.mu.queued) < c.opts.BatchRows {
		return nil, nil
	}
	last := c.mu.queued[len(c.mu.queued)-1].key
	next := append(append(bytes.Clone(schema.MetaCompactionPrefix), last...), 0)
	return next, nil
}

// compactQueued compacts one queued row if it is due.
func (c *Compactor) compactQueued(ctx context.Context, q *queuedRow, now time.Time, drain bool, st *CompactStats) error {
	st.Rows++
	k, err := c.f.opts.Layout.ParseRowKey(q.key)
	if err != nil {
		c.f.hopts.Logger.Warn("ingest: compact: dropping a queue entry with a bad row key", "row", fmt.Sprintf("%x", q.key), "err", err)
		return c.dropEntries(ctx, q, nil, 0, 0, st, true)
	}
	base, nowMs := k.BaseMs(), now.UnixMilli()
	if st.OldestMs == 0 || base < st.OldestMs {
		st.OldestMs = base
	}
	if !drain && base+head.RowSpan+c.f.opts.Grace.Milliseconds() > nowMs {
		st.Waiting++
		return nil
	}
	if !drain {
		if err := c.limit.wait(ctx, 1); err != nil {
			return err
		}
	}
	keep := drain && base+head.RowSpan > nowMs
	skew := c.opts.Skew
	if drain { // this process writes no more: its clock is the only one
		skew = 0
	}
	return c.compactRow(ctx, q, k.Base, keep, skew, st)
}

// Start runs Compact every Interval on a goroutine the Compactor owns
// until Stop. Errors go to the head's logger; the rows stay queued.
func (c *Compactor) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.loop.cancel = cancel
	c.loop.wg.Add(1)
	go func() {
		defer c.loop.wg.Done()
		t := time.NewTicker(c.opts.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if c.f.opts.Gate.Err() != nil {
					continue // read-only (the flusher's gate): the queue waits
				}
				if _, err := c.Compact(ctx, c.f.hopts.Clock(), false); err != nil && ctx.Err() == nil {
					c.f.hopts.Logger.Warn("ingest: background compaction failed", "err", err)
				}
			}
		}
	}()
}

// Stop ends the goroutine Start began, cancelling a compaction in
// progress, and waits for it.
func (c *Compactor) Stop() {
	if c.loop.cancel == nil {
		return
	}
	c.loop.cancel()
	c.loop.wg.Wait()
	c.loop.cancel = nil
}
