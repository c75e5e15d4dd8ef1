package ingest

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// Default flush option values.
const (
	DefaultFlushFamily    = "t"
	DefaultFlushGrace     = 10 * time.Minute
	DefaultFlushBatchRows = 128
)

// FlushOptions configure a Flusher.
type FlushOptions struct {
	// Table is the data table rows are written to. Required.
	Table storage.Table
	// Family is the data column family. Default "t", OpenTSDB's.
	Family string
	// Layout is the table's key layout; its widths must be the head's.
	// Default rowkey.DefaultLayout().
	Layout *rowkey.Layout
	// WriterID names this daemon in dense qualifiers; not 0 (OpenTSDB's
	// own columns count as writer 0). Required.
	WriterID uint32
	// Grace is how long a row must go without a new point, after its hour
	// is over, before it is complete. Default 10 min.
	Grace time.Duration
	// Spread delays each series' rows by a fixed share of it (from a hash
	// of the series) so that the rows of one hour do not all become
	// complete at once. Default Grace; negative disables.
	Spread time.Duration
	// BatchRows is the number of rows per storage Apply. Default 128.
	BatchRows int
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *FlushOptions) EnsureDefaults() *FlushOptions {
	if o.Family == "" {
		o.Family = DefaultFlushFamily
	}
	if o.Layout == nil {
		l := rowkey.DefaultLayout()
		o.Layout = &l
	}
	if o.Grace == 0 {
		o.Grace = DefaultFlushGrace
	}
	if o.Spread == 0 {
		o.Spread = o.Grace
	}
	if o.BatchRows == 0 {
		o.BatchRows = DefaultFlushBatchRows
	}
	return o
}

// Validate reports an option out of range.
func (o *FlushOptions) Validate(w series.Widths) error {
	switch {
	case o.Table == nil:
		return errors.New("ingest: flush: no table")
	case o.WriterID == 0:
		return errors.New("ingest: flush: writer id 0 is OpenTSDB's")
	case o.Layout.Widths != w:
		return fmt.Errorf("ingest: flush: table widths %+v differ from the head's %+v", o.Layout.Widths, w)
	case o.Grace < 0 || o.BatchRows < 0:
		return fmt.Errorf("ingest: flush: negative grace %v or batch %d", o.Grace, o.BatchRows)
	}
	return o.Layout.Validate()
}

// FlushStats count what one Flush wrote.
type FlushStats struct {
	// Rows and Columns count the rows and dense columns written.
	Rows, Columns int64
	// Points counts the points written.
	Points int64
	// TruncatedBefore is the oldest log segment kept afterwards.
	TruncatedBefore uint32
}

// Flusher writes complete rows from the head to the data table, one dense
// column per row (more when a row exceeds rowkey.MaxDensePoints), removes
// them from the head and deletes the log segments no longer needed. It is
// safe for concurrent use; flushes run one at a time.
type Flusher struct {
	h    *Head
	opts FlushOptions
	seed maphash.Seed
	loop struct { // the background loop of Start
		cancel context.CancelFunc
		wg     sync.WaitGroup
	}

	mu struct {
		sync.Mutex
		seq   *flushSeq
		enc   rowkey.DenseEncoder
		rows  []detachedRow
		pts   []series.Point
		arena []byte
		cells []storage.Cell
		muts  []storage.Mutation
	}
}

// detachedRow is a row taken out of its series to be written.
type detachedRow struct {
	s   *memSeries
	row openRow
}

// NewFlusher returns a flusher for h. Its flush numbers are kept in the
// head's log directory.
func (h *Head) NewFlusher(opts *FlushOptions) (*Flusher, error) {
	f := &Flusher{h: h, seed: maphash.MakeSeed()}
	if opts != nil {
		f.opts = *opts
	}
	if err := f.opts.EnsureDefaults().Validate(h.opts.Widths); err != nil {
		return nil, err
	}
	seq, err := openFlushSeq(h.fs, h.log.Dir())
	if err != nil {
		return nil, err
	}
	f.mu.seq = seq
	return f, nil
}

// Flush writes the rows complete at now, or every row when all is set (at
// shutdown), then deletes the log segments that only held flushed points.
// Rows whose write fails go back into the head and the error is returned.
func (f *Flusher) Flush(ctx context.Context, now time.Time, all bool) (FlushStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var st FlushStats
	f.collect(now.UnixMilli(), all)
	err := f.writeAll(ctx, now, &st)
	if err != nil {
		return st, err
	}
	if all {
		if err := f.h.log.Rotate(); err != nil {
			return st, fmt.Errorf("ingest: flush: %w", err)
		}
	}
	st.TruncatedBefore, err = f.h.truncateLog()
	return st, err
}

// collect detaches the complete rows of every series into f.mu.rows.
func (f *Flusher) collect(now int64, all bool) {
	f.mu.rows = f.mu.rows[:0]
	f.h.series.forEach(func(s *memSeries) {
		due := f.dueTime(s)
		s.mu.Lock()
		s.rows = slices.DeleteFunc(s.rows, func(r openRow) bool {
			if all || max(r.base+RowSpan, r.lastWrite)+due <= now {
				f.mu.rows = append(f.mu.rows, detachedRow{s, r})
				return true
			}
			return false
		})
		s.mu.Unlock()
	})
}

// dueTime is how long after its hour (or its last point) a row of s waits.
func (f *Flusher) dueTime(s *memSeries) int64 {
	d := f.opts.Grace.Milliseconds()
	if sp := f.opts.Spread.Milliseconds(); sp > 0 {
		d += int64(maphash.String(f.seed, s.key) % uint64(sp))
	}
	return d
}

// writeAll writes the detached rows in batches; on a failed batch it puts
// that batch and the unwritten rows back into the head.
func (f *Flusher) writeAll(ctx context.Context, now time.Time, st *FlushStats) error {
	rows := f.mu.rows
	for len(rows) > 0 {
		n := min(len(rows), f.opts.BatchRows)
		if err := f.writeBatch(ctx, rows[:n], now, st); err != nil {
			for i := range rows {
				f.h.reinstate(rows[i].s, &rows[i].row)
			}
			clear(f.mu.rows)
			return fmt.Errorf("ingest: flush %d rows: %w", len(rows), err)
		}
		for i := range rows[:n] {
			f.h.mem.Add(-rows[i].row.bytes())
		}
		rows = rows[n:]
	}
	clear(f.mu.rows) // drop series pointers
	return nil
}

// writeBatch encodes rows and applies them in one storage call. Apply is
// not atomic across rows: a row written twice after a failure is a second
// column with the same points, which readers merge.
func (f *Flusher) writeBatch(ctx context.Context, rows []detachedRow, now time.Time, st *FlushStats) error {
	f.mu.arena, f.mu.cells, f.mu.muts = f.mu.arena[:0], f.mu.cells[:0], f.mu.muts[:0]
	type span struct{ key, q, v [2]int }
	var spans []span // offsets into the arena, resolved once it stops growing
	for i := range rows {
		r := &rows[i]
		f.mu.pts = r.row.appendPoints(f.mu.pts[:0], math.MinInt64, math.MaxInt64)
		for pts := f.mu.pts; len(pts) > 0; {
			chunk := pts[:min(len(pts), rowkey.MaxDensePoints)]
			pts = pts[len(chunk):]
			var sp span
			var err error
			if sp.key, sp.q, sp.v, err = f.encodeColumn(r, chunk); err != nil {
				return err
			}
			spans = append(spans, sp)
			st.Points += int64(len(chunk))
		}
	}
	ts := now.UnixMilli() * 1000
	for _, sp := range spans {
		f.mu.cells = append(f.mu.cells, storage.Cell{
			Family: f.opts.Family, Timestamp: ts,
			Qualifier: f.mu.arena[sp.q[0]:sp.q[1]:sp.q[1]], Value: f.mu.arena[sp.v[0]:sp.v[1]:sp.v[1]],
		})
		f.mu.muts = append(f.mu.muts, storage.Mutation{Row: f.mu.arena[sp.key[0]:sp.key[1]:sp.key[1]]})
	}
	for i := range f.mu.muts {
		f.mu.muts[i].Cells = f.mu.cells[i : i+1 : i+1]
	}
	if err := f.opts.Table.Apply(ctx, f.mu.muts); err != nil {
		return err
	}
	st.Rows += int64(len(rows))
	st.Columns += int64(len(spans))
	return nil
}

// encodeColumn appends a dense column of pts (one row's, at most
// MaxDensePoints) to the arena: row key, qualifier, value offsets.
func (f *Flusher) encodeColumn(r *detachedRow, pts []series.Point) (key, q, v [2]int, err error) {
	seq, err := f.mu.seq.take()
	if err != nil {
		return key, q, v, err
	}
	a := f.mu.arena
	key[0] = len(a)
	if a, err = f.opts.Layout.AppendRowKeyFromTSUID(a, keyBytes(r.s.key), r.row.base); err != nil {
		return key, q, v, fmt.Errorf("row key of series %x: %w", r.s.key, err)
	}
	key[1], q[0] = len(a), len(a)
	a = rowkey.AppendDenseQualifier(a, f.opts.WriterID, seq)
	q[1], v[0] = len(a), len(a)
	if a, err = f.mu.enc.Append(a, r.row.base/1000, pts); err != nil {
		return key, q, v, fmt.Errorf("dense column of series %x at %d: %w", r.s.key, r.row.base, err)
	}
	v[1] = len(a)
	f.mu.arena = a
	return key, q, v, nil
}
