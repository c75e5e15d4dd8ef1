package promql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// MaxTime is the last millisecond tsd stores: a row key's base time is 4
// bytes of seconds. Reads are clipped to [0, MaxTime].
const MaxTime = (1<<32)*1000 - 1

// querier is one query's view: its range and its budget.
type querier struct {
	q          *Queryable
	mint, maxt int64
	budget     *read.Budget
	mu         struct {
		sync.Mutex
		fetched []*read.Fetched
		iters   []*read.SeriesIterator
		// first backs fetched and iters for a one-series, one-metric
		// query (most dashboards' panels): no slice allocations.
		firstF [1]*read.Fetched
		firstI [1]*read.SeriesIterator
	}
}

// Close implements storage.Querier: the buffers of the querier's reads go
// back to the Reader. Prometheus uses no series or iterator of a querier
// after closing it.
func (qr *querier) Close() error {
	qr.mu.Lock()
	defer qr.mu.Unlock()
	for _, it := range qr.mu.iters {
		it.Close()
	}
	for _, f := range qr.mu.fetched {
		f.Release()
	}
	qr.mu.iters, qr.mu.fetched = nil, nil
	qr.mu.firstF, qr.mu.firstI = [1]*read.Fetched{}, [1]*read.SeriesIterator{}
	return nil
}

// iterator returns series fi of mr, reusing prev (an iterator of this
// querier) or registering a new one for Close.
func (qr *querier) iterator(mr *metricRead, fi int, prev *read.SeriesIterator) series.Iterator {
	f, err := mr.fetched()
	if err != nil {
		return errIterator{err}
	}
	it := f.Iterator(mr.ctx, fi, prev)
	if prev == nil {
		qr.mu.Lock()
		if qr.mu.iters == nil {
			qr.mu.iters = qr.mu.firstI[:0]
		}
		qr.mu.iters = append(qr.mu.iters, it)
		qr.mu.Unlock()
	}
	return it
}

// Select implements storage.Querier: the series ms select, with lazy
// sample iterators over the hinted range (Start and End; Range and Func are
// already in them), in the hinted shard, at most Limit series.
//
// A selector WithPushdown rewrote (countMarker among ms) is read in count
// mode: the marker is dropped before any label look-up, and every sample
// but a staleness marker reads as 1, in the raw samples, the windows
// pushed down (a count) and those answered from rollup cells (their
// count cells).
func (qr *querier) Select(ctx context.Context, sortSeries bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	// The window marker first: rewriteWindows appends it after the count
	// marker, so each is then cut off the end.
	ms, win, windowed, err := windowMode(ms)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	ms, count := countMode(ms)
	if windowed {
		if hints == nil {
			return storage.ErrSeriesSet(errors.New("promql: window selector without hints"))
		}
		hints = win.matrixHints(hints)
	}
	start, end := qr.mint, qr.maxt
	if hints != nil {
		start, end = hints.Start, hints.End
	}
	start, end = max(start, 0), min(end, MaxTime)
	ss, err := qr.selectSeries(ctx, ms, start, end)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	if hints != nil && hints.ShardCount > 0 {
		ss = shard(ss, hints.ShardIndex, hints.ShardCount)
	}
	if sortSeries {
		slices.SortFunc(ss, func(a, b *tsdSeries) int { return labels.Compare(a.lbls, b.lbls) })
	}
	if hints != nil && hints.Limit > 0 && len(ss) > hints.Limit {
		ss = ss[:hints.Limit]
	}
	if err := qr.budget.AddSeries(len(ss)); err != nil {
		return storage.ErrSeriesSet(err)
	}
	qr.fetch(ctx, ss, start, end)
	set := &pushdownSet{seriesSet: seriesSet{ss: ss, i: -1}}
	var pd pushdown
	var ok bool
	if !windowed {
		pd, ok = qr.pushdown(ctx, hints, count)
	} else {
		// The engine reads this selector as an instant one: every
		// series must return its windows (rewriteWindows checked that
		// the hints allow them), marked context or not.
		if pd, ok = planOf(hints, count); !ok {
			return storage.ErrSeriesSet(fmt.Errorf("promql: no window plan for %s over %d ms", win.fn, win.rng))
		}
		win.windowLabels(ss)
		if needsStaleFill(&pd, win.lookback) {
			for _, s := range ss {
				s.fill = win.lookback
			}
		}
		qr.q.stats.windowSelects.Add(1)
	}
	if !ok && count {
		for _, s := range ss {
			s.ones = true
		}
	}
	if ok {
		set.pd = pd
		iv := qr.rollupFor(&set.pd)
		for _, s := range ss {
			s.pd, s.mr.pd = &set.pd, &set.pd
			s.mr.rw.use, s.mr.rw.ivIdx = iv >= 0, iv
		}
		qr.q.stats.pushdownSelects.Add(1)
		qr.q.stats.pushdownSeries.Add(int64(len(ss)))
	}
	return &set.seriesSet
}

// pushdownSet is a Select's series set and the plan its series share:
// one allocation for both.
type pushdownSet struct {
	seriesSet
	pd pushdown
}

// pushdown returns the Select's range function plan, if the context and
// the hints allow one and Options do not disable it; count: the Select
// is in count mode.
func (qr *querier) pushdown(ctx context.Context, hints *storage.SelectHints, count bool) (pushdown, bool) {
	if qr.q.opts.DisablePushdown {
		return pushdown{}, false
	}
	return pushdownPlan(ctx, hints, count)
}

// fetch prepares the reads of ss over [start, end]: one metricRead per
// metric, run when the engine first iterates one of its series.
func (qr *querier) fetch(ctx context.Context, ss []*tsdSeries, start, end int64) {
	w := qr.q.opts.UIDs.Width(uid.Metric)
	if len(ss) == 0 || !slices.ContainsFunc(ss, func(s *tsdSeries) bool { return s.s.TSUID[:w] != ss[0].s.TSUID[:w] }) {
		qr.fetchMetric(ctx, ss, start, end)
		return
	}
	for len(ss) > 0 {
		metric := ss[0].s.TSUID[:w]
		var group, rest []*tsdSeries
		for _, s := range ss {
			if s.s.TSUID[:w] == metric {
				group = append(group, s)
			} else {
				rest = append(rest, s)
			}
		}
		qr.fetchMetric(ctx, group, start, end)
		ss = rest
	}
}

// fetchMetric points ss, series of one metric, at their shared read.
func (qr *querier) fetchMetric(ctx context.Context, ss []*tsdSeries, start, end int64) {
	if len(ss) == 0 {
		return
	}
	mr := &metricRead{qr: qr, ctx: ctx,
		sel: read.Selection{Start: start, End: end, Budget: qr.budget}}
	if len(ss) == 1 {
		mr.sel.Series = mr.one[:] // a single series: no second allocation
	} else {
		mr.sel.Series = make([]index.Series, len(ss))
	}
	for i, s := range ss {
		mr.sel.Series[i] = s.s
		s.mr, s.fi = mr, i
	}
}

// metricRead is the read.Fetch of one metric's selected series, made
// once, when the engine first iterates one of them: a Select whose
// samples are never read (series and label look-ups) reads no rows.
type metricRead struct {
	qr   *querier
	ctx  context.Context
	sel  read.Selection
	one  [1]index.Series // sel.Series of a single series
	once sync.Once
	f    *read.Fetched
	err  error
	pd   *pushdown     // the Select's pushdown, if any
	aw   aheadWindows  // with pd, many series: their windows
	rw   rollupWindows // with pd from rollup cells: the windows
}

// fetched returns the read, running it on the first call.
func (mr *metricRead) fetched() (*read.Fetched, error) {
	mr.once.Do(func() {
		qr := mr.qr
		mr.sel.MetricSeries = qr.metricSeries(mr.ctx, &mr.sel)
		mr.f, mr.err = qr.q.opts.Reader.Fetch(mr.ctx, mr.sel)
		if mr.err == nil {
			qr.mu.Lock()
			if qr.mu.fetched == nil {
				qr.mu.fetched = qr.mu.firstF[:0]
			}
			qr.mu.fetched = append(qr.mu.fetched, mr.f)
			qr.mu.Unlock()
		}
	})
	return mr.f, mr.err
}

// metricSeries counts the series the metric of sel has in its range, for
// the read planner, unless sel alone already makes Gets the cheaper plan.
func (qr *querier) metricSeries(ctx context.Context, sel *read.Selection) int {
	n := len(sel.Series)
	s := *sel
	s.MetricSeries = n
	if qr.q.opts.Reader.Choose(s) == read.PlanSeries {
		return n
	}
	id, _, err := uid.ParseID([]byte(sel.Series[0].TSUID), qr.q.opts.UIDs.Width(uid.Metric))
	if err != nil {
		return 0
	}
	b, err := qr.q.opts.Index.Postings(ctx, id, nil)
	if err != nil {
		return 0 // unknown: the planner guesses
	}
	qr.q.opts.Index.RestrictTime(b, sel.Start, sel.End)
	return max(n, int(b.GetCardinality()))
}

// shard keeps the series of shard i of n, as Prometheus's tsdb shards:
// by the stable hash of the labels.
func shard(ss []*tsdSeries, i, n uint64) []*tsdSeries {
	return slices.DeleteFunc(ss, func(s *tsdSeries) bool { return labels.StableHash(s.lbls)%n != i })
}

// selectSeries returns the series ms select, labelled, reading [start, end].
func (qr *querier) selectSeries(ctx context.Context, ms []*labels.Matcher, start, end int64) ([]*tsdSeries, error) {
	b, err := qr.q.postings(ctx, ms, start, end)
	if err != nil || b == nil || start > end {
		return nil, err
	}
	var sb labels.ScratchBuilder // used on label cache misses only
	all := qr.seriesOf(b)
	// One allocation holds every selected series: a query's Select
	// returns them all, and the engine keeps none past the querier.
	backing := make([]tsdSeries, 0, len(all))
	out := make([]*tsdSeries, 0, len(all))
	for _, s := range all {
		l, err := qr.q.seriesLabels(ctx, &sb, s.TSUID)
		if isNoSuchID(err) {
			continue // a name deleted since: the series cannot be named
		}
		if err != nil {
			return nil, err
		}
		if matchesAll(l, ms) {
			backing = append(backing, tsdSeries{qr: qr, s: s, lbls: l})
			out = append(out, &backing[len(backing)-1])
		}
	}
	return out, nil
}

// seriesOf describes the series of b, in id order.
func (qr *querier) seriesOf(b *roaring.Bitmap) []index.Series {
	out := make([]index.Series, 0, b.GetCardinality())
	qr.q.opts.Index.ForEach(b, func(s index.Series) bool {
		out = append(out, s)
		return true
	})
	return out
}

// LabelNames implements storage.LabelQuerier: the tag keys of the series
// ms select in the querier's range, and __name__, sorted.
func (qr *querier) LabelNames(ctx context.Context, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	ix := qr.q.opts.Index
	var keys []uid.ID
	some := ix.Len() > 0
	if len(ms) > 0 {
		b, err := qr.q.postings(ctx, ms, qr.mint, qr.maxt)
		if err != nil || b == nil || b.IsEmpty() {
			return nil, nil, err
		}
		keys, some = ix.TagKeys(b), true
	} else {
		keys = ix.TagKeys(nil)
	}
	names, err := qr.q.names(ctx, uid.TagK, keys)
	if err != nil {
		return nil, nil, err
	}
	if some {
		names = append(names, labels.MetricName)
	}
	return sortLimit(names, hints), nil, nil
}

// LabelValues implements storage.LabelQuerier: the values of the label
// name (the metrics for __name__) among the series ms select, sorted.
func (qr *querier) LabelValues(ctx context.Context, name string, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	key, kind := index.NameKey, uid.Metric
	if name != labels.MetricName {
		id, ok, err := qr.q.lookup(ctx, uid.TagK, name)
		if err != nil || !ok {
			return nil, nil, err
		}
		key, kind = id, uid.TagV
	}
	var vals []uid.ID
	if len(ms) > 0 {
		b, err := qr.q.postings(ctx, ms, qr.mint, qr.maxt)
		if err != nil || b == nil || b.IsEmpty() {
			return nil, nil, err
		}
		vals = qr.q.opts.Index.TagValues(key, b)
	} else {
		vals = qr.q.opts.Index.TagValues(key, nil)
	}
	names, err := qr.q.names(ctx, kind, vals)
	if err != nil {
		return nil, nil, err
	}
	return sortLimit(names, hints), nil, nil
}

// names names ids, skipping UIDs without a name (deleted).
func (q *Queryable) names(ctx context.Context, kind uid.Kind, ids []uid.ID) ([]string, error) {
	out := make([]string, 0, len(ids)+1)
	for _, id := range ids {
		n, err := q.opts.UIDs.Name(ctx, kind, id)
		if err != nil {
			if isNoSuchID(err) {
				continue
			}
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// sortLimit sorts names and applies the hinted limit.
func sortLimit(names []string, hints *storage.LabelHints) []string {
	slices.Sort(names)
	names = slices.Compact(names)
	if hints != nil && hints.Limit > 0 && len(names) > hints.Limit {
		names = names[:hints.Limit]
	}
	return names
}

func isNoSuchID(err error) bool { return errors.Is(err, uid.ErrNoSuchID) }

// errIterator is an empty series.Iterator failing with err.
type errIterator struct{ err error }

func (errIterator) Next() bool          { return false }
func (errIterator) SeekTime(int64) bool { return false }
func (errIterator) At() series.Point    { return series.Point{} }
func (e errIterator) Err() error        { return e.err }
