package flush

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// DefaultRetentionInterval is how often a started Retention job runs.
const DefaultRetentionInterval = time.Hour

// RetentionOptions configure a Retention job.
type RetentionOptions struct {
	// Table is the data table. Required.
	Table storage.Table
	// UIDs lists the metrics (their names and UIDs). Required.
	UIDs *uid.UIDs
	// Rules are tsd.storage.retention's rules. Default none: nothing
	// expires.
	Rules *retention.Rules
	// Layout is the table's key layout. Default rowkey.DefaultLayout().
	Layout *rowkey.Layout
	// Interval is how often Start runs the job. Default 1 h.
	Interval time.Duration
	// Clock gives now. Default time.Now.
	Clock func() time.Time
	// Logger receives the job's failures. Default slog.Default().
	Logger *slog.Logger
	// Gate skips the started job's runs while the daemon is read-only.
	// Default none.
	Gate *ingest.Gate
	// Rollups are the rollup tables with rules of their own (a
	// tsd.storage.retention rule starting `@<interval> `). Default none.
	Rollups []RollupRetention
	// Changes is marked whole after every range the job deletes (readers
	// already hide expired points; the mark keeps any trust honest).
	// Default nil.
	Changes *changes.Tracker
}

// RollupRetention is the retention of one rollup interval's table: its
// rows go when their whole span (a day, a month) is before the cutoff.
type RollupRetention struct {
	Table    storage.Table
	Interval *rollup.Interval
	Rules    *retention.Rules
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *RetentionOptions) EnsureDefaults() *RetentionOptions {
	if o.Rules == nil {
		o.Rules = &retention.Rules{}
	}
	if o.Layout == nil {
		l := rowkey.DefaultLayout()
		o.Layout = &l
	}
	if o.Interval == 0 {
		o.Interval = DefaultRetentionInterval
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports a missing or bad option.
func (o *RetentionOptions) Validate() error {
	switch {
	case o.Table == nil || o.UIDs == nil:
		return errors.New("ingest: retention: table and UIDs are required")
	case o.Interval < 0:
		return fmt.Errorf("ingest: retention: negative interval %v", o.Interval)
	}
	return o.Layout.Validate()
}

// RetentionStats count what one run did.
type RetentionStats struct {
	// Metrics counts the metrics listed, Expiring those a finite rule
	// matched.
	Metrics, Expiring int64
	// Ranges counts the range deletions issued (one per salt bucket that
	// held expired rows).
	Ranges int64
}

// Retention deletes expired rows: for every metric a finite rule matches,
// the rows of every salt bucket whose whole hour is before the metric's
// cutoff, [salt][metric][0] to [salt][metric][cutoff hour], with one
// DeleteRange each, so their space comes back once the engine compacts.
// Points of the cutoff's own hour stay until the next hour's run; readers
// filter them (retention.Rules.Cutoff). UIDs are kept. The head is not
// touched: expired points still in it are written and deleted by a later
// run, and filtered meanwhile.
type Retention struct {
	opts RetentionOptions
	loop struct {
		cancel context.CancelFunc
		wg     sync.WaitGroup
	}
	mu sync.Mutex // one run at a time
}

// NewRetention returns a retention job.
func NewRetention(opts *RetentionOptions) (*Retention, error) {
	r := &Retention{}
	if opts != nil {
		r.opts = *opts
	}
	if err := r.opts.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Run deletes the rows expired at now.
func (r *Retention) Run(ctx context.Context, now time.Time) (RetentionStats, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var st RetentionStats
	if r.opts.Rules.Len() == 0 && len(r.opts.Rollups) == 0 {
		return st, nil
	}
	var buf []byte
	err := r.opts.UIDs.ForEach(ctx, uid.Metric, "", func(name string, id uid.ID) error {
		st.Metrics++
		buf = r.opts.UIDs.AppendID(buf[:0], uid.Metric, id)
		for _, rr := range r.opts.Rollups {
			if cutoff := rr.Rules.Cutoff(name, now); cutoff != math.MinInt64 {
				// Rows whose span ends before the cutoff: bases before the
				// base of the row holding it.
				end := rr.Interval.BaseTime(max(cutoff, 0)/1000) * 1000
				if err := r.expire(ctx, rr.Table, buf, name, end, &st); err != nil {
					return err
				}
			}
		}
		cutoff := r.opts.Rules.Cutoff(name, now)
		if cutoff == math.MinInt64 {
			return nil
		}
		st.Expiring++
		cutoff = max(cutoff, 0)
		return r.expire(ctx, r.opts.Table, buf, name, cutoff-cutoff%head.RowSpan, &st) // its hour's base
	})
	if err != nil {
		return st, fmt.Errorf("ingest: retention: %w", err)
	}
	return st, nil
}

// expire deletes the rows of metric with a base before end, bucket by
// bucket, skipping buckets that hold none (a range deletion costs the
// engine a tombstone even when it removes nothing).
func (r *Retention) expire(ctx context.Context, tbl storage.Table, metric []byte, name string, end int64, st *RetentionStats) error {
	if end <= 0 {
		return nil
	}
	l := r.opts.Layout
	for b := range l.Buckets() {
		start, stop := l.BucketRange(b, metric, 0, end-1) // the hours before end
		if empty, err := r.empty(ctx, tbl, start, stop); err != nil || empty {
			if err != nil {
				return fmt.Errorf("metric %s: %w", name, err)
			}
			continue
		}
		err := tbl.DeleteRange(ctx, start, stop)
		if r.opts.Changes != nil {
			r.opts.Changes.MarkAll()
		}
		if err != nil {
			return fmt.Errorf("delete expired rows of metric %s: %w", name, err)
		}
		st.Ranges++
	}
	return nil
}

// empty reports whether no row lies in [start, stop).
func (r *Retention) empty(ctx context.Context, tbl storage.Table, start, stop []byte) (bool, error) {
	sc := tbl.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop, Limit: 1})
	found := sc.Next()
	return !found, sc.Close()
}

// Start runs the job every Interval on a goroutine it owns until Stop,
// the first time at once. Errors go to the logger; the next run retries.
func (r *Retention) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.loop.cancel = cancel
	r.loop.wg.Add(1)
	go func() {
		defer r.loop.wg.Done()
		t := time.NewTicker(r.opts.Interval)
		defer t.Stop()
		for {
			r.background(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// background is one run of Start's loop. While the daemon is read-only
// runs are skipped; the next one deletes whatever expired meanwhile.
func (r *Retention) background(ctx context.Context) {
	if r.opts.Gate.Err() != nil {
		return
	}
	if _, err := r.Run(ctx, r.opts.Clock()); err != nil && ctx.Err() == nil {
		r.opts.Logger.Warn("ingest: retention run failed", "err", err)
	}
}

// Stop ends the goroutine Start began and waits for it.
func (r *Retention) Stop() {
	if r.loop.cancel == nil {
		return
	}
	r.loop.cancel()
	r.loop.wg.Wait()
	r.loop.cancel = nil
}
