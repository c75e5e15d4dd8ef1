package promql

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/query/read"
)

// Queryable is Prometheus's storage.Queryable over tsd's index, store and
// head. It is safe for concurrent use.
type Queryable struct {
	opts   Options
	labels labelCache
	tables tableCounts // Selects answered from rollup cells, by table
	stats  struct {
		pushdownSelects, pushdownSeries, pushdownAhead atomic.Int64
		windowSelects                                  atomic.Int64
		rollupSelects, rollupCells, rollupRawRanges    atomic.Int64
		rollupRawWindows, rollupRawEdges               atomic.Int64
	}
}

// Stats count a Queryable's work since New.
type Stats struct {
	// PushdownSelects is the number of Selects that evaluated a range
	// function themselves (WithPushdown).
	PushdownSelects int64
	// PushdownSeries is the number of series those Selects returned.
	PushdownSeries int64
	// PushdownAhead is the number of metrics' series sets those Selects
	// evaluated all at once, in parallel, when the engine iterated the
	// first.
	PushdownAhead int64
	// WindowSelects is the number of those Selects of a selector
	// WithPushdown put in place of its range function's call, which the
	// engine read as an instant selector.
	WindowSelects int64
	// RollupSelects is the number of pushed-down Selects answered from
	// rollup cells, RollupCells the stored cells they read,
	// RollupRawRanges the ranges they folded from raw points (head hours,
	// hours whose cells are not written) and RollupRawWindows the
	// windows they read raw (a min or max whose extreme may be the point
	// leaving the window, an edge point without its cell).
	RollupSelects, RollupCells, RollupRawRanges, RollupRawWindows int64
	// RollupRawEdges is the number of window edges whose point they read
	// raw because no cell there knows its first point (OpenTSDB columns,
	// cells written before cells kept it).
	RollupRawEdges int64
	// RollupTables counts those Selects by the rollup table that served
	// them ("tsdb-rollup-1h").
	RollupTables map[string]int64
}

// Stats returns the counters since New.
func (q *Queryable) Stats() Stats {
	return Stats{PushdownSelects: q.stats.pushdownSelects.Load(), PushdownSeries: q.stats.pushdownSeries.Load(),
		PushdownAhead: q.stats.pushdownAhead.Load(), WindowSelects: q.stats.windowSelects.Load(), RollupSelects: q.stats.rollupSelects.Load(),
		RollupCells: q.stats.rollupCells.Load(), RollupRawRanges: q.stats.rollupRawRanges.Load(),
		RollupRawWindows: q.stats.rollupRawWindows.Load(), RollupRawEdges: q.stats.rollupRawEdges.Load(),
		RollupTables: q.tables.snapshot()}
}

var _ storage.Queryable = (*Queryable)(nil)

// tableCounts counts by table name (a few rollup tables).
type tableCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

func (t *tableCounts) add(table string) {
	t.mu.Lock()
	if t.n == nil {
		t.n = map[string]int64{}
	}
	t.n[table]++
	t.mu.Unlock()
}

func (t *tableCounts) snapshot() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.n)
}

// New returns a Queryable reading through opts' Reader, Index and UIDs.
func New(opts *Options) (*Queryable, error) {
	o := *opts
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	q := &Queryable{opts: o}
	q.labels.init(o.LabelCacheSize)
	return q, nil
}

// Querier returns a querier over [mint, maxt] (ms, inclusive) with a fresh
// budget of Options.Limits: the engine opens one per query.
func (q *Queryable) Querier(mint, maxt int64) (storage.Querier, error) {
	return &querier{q: q, mint: mint, maxt: maxt, budget: q.newBudget()}, nil
}

// Limits returns the per-query limits.
func (q *Queryable) Limits() read.Limits { return q.opts.Limits }

// DropCaches forgets every cached label set, so that UID renames and
// deletes made elsewhere show.
func (q *Queryable) DropCaches() { q.labels.reset() }

func (q *Queryable) newBudget() *read.Budget {
	if q.opts.Limits == (read.Limits{}) {
		return nil
	}
	return read.NewBudget(q.opts.Limits)
}
