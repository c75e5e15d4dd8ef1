package flush

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// Default flush option values.
const (
	DefaultFlushFamily    = schema.DataFamily
	DefaultFlushGrace     = 10 * time.Minute
	DefaultFlushBatchRows = 128
	// DefaultFlushRowsPerSecond paces due rows: about 72 million rows an
	// hour, several times what 10 million series fill in an hour, while a
	// store never sees the whole hour at once.
	DefaultFlushRowsPerSecond = 20_000
)

// FlushOptions configure a Flusher.
type FlushOptions struct {
	// Table is the data table rows are written to. Required.
	Table storage.Table
	// Meta is the meta table (schema.MetaTableSpec) whose family q holds the
	// compaction queue: rows that got a second column (late points, early
	// flushes, writes repeated after a crash) are recorded there for the
	// Compactor. Default none: such rows keep several columns, which
	// readers merge.
	Meta storage.Table
	// Family is the data column family. Default "t", OpenTSDB's.
	Family string
	// Layout is the table's key layout; its widths must be the head's.
	// Default rowkey.DefaultLayout().
	Layout *rowkey.Layout
	// Format is the table's write format (the meta record's, schema.Settings):
	// schema.FormatDense writes one dense column per row, schema.FormatOpenTSDB
	// OpenTSDB's compacted column. Default schema.FormatDense.
	Format schema.Format
	// WriterID names this daemon in dense qualifiers (LoadWriterID); not 0
	// (OpenTSDB's own columns count as writer 0). Required.
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
	// RowsPerSecond caps the rate at which complete rows are written (a
	// token bucket). Flushes at shutdown and under memory pressure are not
	// capped. Default 20,000; negative is unlimited.
	RowsPerSecond float64
	// Rollups, when set, makes the flusher and its compactor compute the
	// rollup cells of every raw row they write (rollup.go). Default none.
	Rollups *RollupOptions
	// Gate pauses the started loops (Start, and the Compactor's) while
	// the daemon is read-only: rounds are skipped, rows stay in the head
	// and the log, and the next round after the gate opens writes them.
	// Default none.
	Gate *ingest.Gate
	// Tracker records each written row's point count and latest arrival
	// in its series' TSMeta (tsd.core.meta.enable_tsuid_tracking and
	// friends), once per batch, after the rows are in the table; its
	// failure is logged and costs no row. Default none: nothing tracked.
	Tracker *tsmeta.Tracker

	// Moved hears of each row a dense batch wrote as one column, after
	// the write and before the head lets the row go. Default none.
	Moved RowMover

	log *slog.Logger // the head's
	// Changes is marked with the hours of the rows every batch wrote (and
	// every compacted row) once the write returns, failed or not: a
	// failed Apply may have stored some rows. The marks are moves
	// (MarkMoved): the points keep their values, so cached answers hold,
	// while query readers trust a stored row they read only while its
	// hour is unmarked since (query/read, trust.go). Default nil.
	Changes *changes.Tracker
}

// RowMover hears of the rows a flush writes. query/read.Reader hands its
// row cache's entry of the head row on to the stored row, so that the
// first read after a flush decodes nothing it had decoded before.
type RowMover interface {
	// RowMoved says that the points of the head's row of series tsuid at
	// base (ms), listed to readers under headFP (head.DetachedRow.FP), are
	// now stored as cells in the row key. The row may hold other columns
	// too (a late row's earlier ones, another writer's), which a reader
	// sees in the columns it reads. It must not keep tsuid, key or cells.
	RowMoved(tsuid []byte, base int64, headFP uint64, key []byte, cells []storage.Cell)
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
	if o.RowsPerSecond == 0 {
		o.RowsPerSecond = DefaultFlushRowsPerSecond
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
	case !o.Format.Valid():
		return fmt.Errorf("ingest: flush: unknown format %d", o.Format)
	}
	return o.Layout.Validate()
}

// logger is where flush warnings go; set from the head's options.
func (o *FlushOptions) logger() *slog.Logger { return o.log }

// FlushStats count what one Flush wrote.
type FlushStats struct {
	// Rows and Columns count the rows and columns written.
	Rows, Columns int64
	// Points counts the points written.
	Points int64
	// Queued counts the rows recorded in the compaction queue.
	Queued int64
	// Conflicts counts opentsdb-format columns another writer had written
	// first, merged with ours.
	Conflicts int64
	// TruncatedBefore is the oldest log segment kept afterwards.
	TruncatedBefore uint32
	// Tracked counts the rows recorded by FlushOptions.Tracker, and
	// TrackErrors the batches it failed to record.
	Tracked, TrackErrors int64
	// Examined counts the open rows the flush took from the hour index to
	// look at, due or not. A round that knows none can be due looks at
	// none (flush_quiet.go).
	Examined int64
}

// Flusher writes complete rows from the head to the data table, one column
// per row in the table's format, removes them from the head and deletes
// the log segments no longer needed. It is safe for concurrent use;
// flushes run one at a time.
type Flusher struct {
	h     *head.Head
	hopts head.HeadOptions // the head's
	opts  FlushOptions
	seed  maphash.Seed
	seq   *flushSeq
	limit *limiter
	roll  *rollupWriter // nil without rollups
	loop  struct {      // the background loop of Start
		cancel context.CancelFunc
		wg     sync.WaitGroup
	}
	total struct { // what every flush wrote
		sync.Mutex
		st FlushStats
	}

	mu struct {
		sync.Mutex
		entries []head.HourEntry
		rows    []head.DetachedRow
		w       columnWriter
		queue   compactionQueue
		// until, when set, ends flushEntries early once it returns true.
		until func() bool
		// quiet is what the latest complete round left (flush_quiet.go).
		quiet quiet
	}
}

// NewFlusher returns a flusher for h. Its flush numbers are kept in the
// head's log directory.
func NewFlusher(h *head.Head, opts *FlushOptions) (*Flusher, error) {
	f := &Flusher{h: h, hopts: h.Options(), seed: maphash.MakeSeed()}
	if opts != nil {
		f.opts = *opts
	}
	if err := f.opts.EnsureDefaults().Validate(f.hopts.Widths); err != nil {
		return nil, err
	}
	seq, err := openFlushSeq(h.FS(), h.LogDir())
	if err != nil {
		return nil, err
	}
	f.seq = seq
	top, err := openFlushTop(h.FS(), h.LogDir())
	if err != nil {
		return nil, err
	}
	f.opts.log = f.hopts.Logger
	f.limit = newLimiter(f.opts.RowsPerSecond)
	if f.roll, err = newRollupWriter(&f.opts, f.opts.Rollups, f.hopts.Logger); err != nil {
		return nil, err
	}
	if f.roll != nil {
		f.roll.startMs = top.floor(f.hopts.Clock().UnixMilli())
	}
	f.mu.w.init(&f.opts, seq, top, f.roll)
	f.mu.queue.init(&f.opts, f.hopts.Logger)
	return f, nil
}

// Flush writes the rows complete at now, or every row when all is set (at
// shutdown, not rate limited), then deletes the log segments that only
// held flushed points. Rows whose write fails go back into the head and
// the error is returned.
func (f *Flusher) Flush(ctx context.Context, now time.Time, all bool) (st FlushStats, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() { f.count(&st) }()
	nowMs, wait := now.UnixMilli(), f.opts.Grace.Milliseconds()
	listed := f.h.ListedRows()
	if !all && f.mu.quiet.holds(nowMs, listed) {
		return f.truncate(&st)
	}
	next := quiet{until: math.MaxInt64, listed: listed}
	// dueBy reports whether what comes due at t is due now, and keeps the
	// earliest t that is not.
	dueBy := func(t int64) bool {
		if all || t <= nowMs {
			return true
		}
		next.before(t)
		return false
	}
	f.mu.entries = f.h.TakeHours(f.mu.entries[:0], func(base int64) bool {
		return dueBy(base + head.RowSpan + wait)
	})
	due := func(key string, base, lastWrite int64) bool {
		return dueBy(max(base+head.RowSpan, lastWrite) + f.dueTime(key))
	}
	f.mu.quiet = quiet{}
	if err := f.flushEntries(ctx, now, due, !all, &st); err != nil {
		return st, err
	}
	if !all {
		next.ok = true
		f.mu.quiet = next
	} else if err := f.h.RotateLog(); err != nil {
		return st, fmt.Errorf("ingest: flush: %w", err)
	}
	return f.truncate(&st)
}

// truncate deletes the log segments the flushed rows were the last to need.
func (f *Flusher) truncate(st *FlushStats) (FlushStats, error) {
	var err error
	st.TruncatedBefore, err = f.h.TruncateLog()
	return *st, err
}

// RollupStats returns what the rollup writer of the flusher and its
// compactor did so far.
func (f *Flusher) RollupStats() RollupStats { return f.roll.stats() }

// Stats returns what every flush so far wrote (TruncatedBefore: the
// latest), for tsd's own metrics.
func (f *Flusher) Stats() FlushStats {
	f.total.Lock()
	defer f.total.Unlock()
	return f.total.st
}

// count adds one flush's figures to the totals.
func (f *Flusher) count(st *FlushStats) {
	f.total.Lock()
	defer f.total.Unlock()
	t := &f.total.st
	t.Rows += st.Rows
	t.Columns += st.Columns
	t.Points += st.Points
	t.Queued += st.Queued
	t.Conflicts += st.Conflicts
	t.Tracked += st.Tracked
	t.Examined += st.Examined
	t.TrackErrors += st.TrackErrors
	if st.TruncatedBefore != 0 {
		t.TruncatedBefore = st.TruncatedBefore
	}
}

// dueTime is how long after its hour (or its last point) a row of the
// series with key waits.
func (f *Flusher) dueTime(key string) int64 {
	d := f.opts.Grace.Milliseconds()
	if sp := f.opts.Spread.Milliseconds(); sp > 0 {
		d += int64(maphash.String(f.seed, key) % uint64(sp))
	}
	return d
}

// flushEntries writes, in batches, the rows of f.mu.entries that due
// accepts, paced by the rate limit when limited. Entries it did not get
// to (after an error) go back to the hour index; a batch whose write
// failed goes back into the head.
func (f *Flusher) flushEntries(ctx context.Context, now time.Time, due func(key string, base, lastWrite int64) bool, limited bool, st *FlushStats) error {
	es := f.mu.entries
	st.Examined += int64(len(es))
	defer func() {
		f.h.RestoreEntries(es)
		clear(f.mu.entries) // drop series pointers
		clear(f.mu.rows)
	}()
	for len(es) > 0 && (f.mu.until == nil || !f.mu.until()) {
		rows := f.mu.rows[:0]
		for len(es) > 0 && len(rows) < f.opts.BatchRows {
			if d, ok := f.h.DetachRow(es[0], due); ok {
				rows = append(rows, d)
			}
			es = es[1:]
		}
		f.mu.rows = rows
		if err := f.writeBatch(ctx, rows, now, limited, st); err != nil {
			return err
		}
	}
	return nil
}

// writeBatch writes detached rows and releases them, or puts them back.
// A paced flush stops pacing while the head is over its memory limit: due
// rows are the oldest, and writing them is what brings memory down.
func (f *Flusher) writeBatch(ctx context.Context, rows []head.DetachedRow, now time.Time, limited bool, st *FlushStats) error {
	if len(rows) == 0 {
		return nil
	}
	err := ctx.Err()
	if err == nil && limited && !f.h.OverLimit() {
		err = f.limit.wait(ctx, len(rows))
	}
	if err != nil { // nothing was written
		for i := range rows {
			f.h.Reinstate(&rows[i], false)
		}
		return err
	}
	if err := f.mu.w.write(ctx, rows, now, &f.mu.queue, st); err != nil {
		for i := range rows {
			f.h.Reinstate(&rows[i], true)
		}
		f.h.SetFlushFailing(true)
		return fmt.Errorf("ingest: flush %d rows: %w", len(rows), err)
	}
	f.h.SetFlushFailing(false)
	f.track(ctx, st)
	for i := range rows {
		f.h.FinishRow(&rows[i])
	}
	st.Queued += f.mu.queue.write(ctx, now)
	return nil
}

// track hands the batch's rows to the tracker. Counting is best effort:
// a failure is logged and the rows stay written.
func (f *Flusher) track(ctx context.Context, st *FlushStats) {
	tr := f.mu.w.tracked
	if f.mu.w.opts.Tracker == nil || len(tr) == 0 {
		return
	}
	if err := f.mu.w.opts.Tracker.Track(ctx, tr); err != nil {
		st.TrackErrors++
		f.mu.w.opts.logger().Warn("ingest: flush: TSMeta tracking", "rows", len(tr), "err", err)
		return
	}
	st.Tracked += int64(len(tr))
}
