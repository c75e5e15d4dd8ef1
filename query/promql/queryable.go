package promql

import (
	"sync/atomic"

	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/query/read"
)

// Queryable is Prometheus's storage.Queryable over tsd's index, store and
// head. It is safe for concurrent use.
type Queryable struct {
	opts   Options
	labels labelCache
	stats  struct {
		pushdownSelects, pushdownSeries, pushdownAhead atomic.Int64
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
}

// Stats returns the counters since New.
func (q *Queryable) Stats() Stats {
	return Stats{PushdownSelects: q.stats.pushdownSelects.Load(), PushdownSeries: q.stats.pushdownSeries.Load(),
		PushdownAhead: q.stats.pushdownAhead.Load()}
}

var _ storage.Queryable = (*Queryable)(nil)

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
