package read

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// Plan is how Read fetches rows.
type Plan uint8

const (
	// PlanAuto picks the cheaper plan from the selection's size.
	PlanAuto Plan = iota
	// PlanSeries reads each selected series' hour rows with Gets.
	PlanSeries
	// PlanScan scans the metric's rows in every salt bucket.
	PlanScan
)

// ParsePlan reads a plan's name: auto, series or scan.
func ParsePlan(s string) (Plan, error) {
	for _, p := range []Plan{PlanAuto, PlanSeries, PlanScan} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("read: unknown plan %q (want auto, series or scan)", s)
}

// String names the plan.
func (p Plan) String() string {
	switch p {
	case PlanSeries:
		return "series"
	case PlanScan:
		return "scan"
	}
	return "auto"
}

// Selection is what Read reads: series of one metric over a time range.
type Selection struct {
	// Series are the series to read; all share one metric UID.
	Series []index.Series
	// Start and End bound the points, in ms, both inclusive.
	Start, End int64
	// MetricSeries is the number of series the metric has in the range,
	// the cost of a scan; 0 means unknown (the planner then assumes the
	// selection is a tenth of the metric).
	MetricSeries int
	// Plan forces a plan; PlanAuto lets the planner choose.
	Plan Plan
	// Budget limits the read; nil is unlimited.
	Budget *Budget
	// Notes asks for the annotations stored in the series' rows (OpenTSDB
	// keeps them beside the points), at no extra read.
	Notes bool
	// MaxFetchBytes, when positive, is Fetch's bound for this selection
	// instead of Options.MaxFetchBytes, for a caller that keeps a Fetched
	// a while and wants it smaller (a streamed answer paused on a slow
	// client). Read and Visit ignore it.
	MaxFetchBytes int64
}

// Note is an annotation cell found in a series' row.
type Note struct {
	// T is the annotation's start time in ms (row base + qualifier offset).
	T int64
	// Value is the cell: the annotation's JSON. The Func owns it.
	Value []byte
}

// Stats count a Reader's work since it was made.
type Stats struct {
	// Gets and Scans count storage requests; Rows the rows decoded.
	Gets, Scans, Rows int64
	// CorruptCells counts cells that did not decode and were skipped.
	CorruptCells int64
	// PlansSeries and PlansScan count the plans chosen.
	PlansSeries, PlansScan int64
	// CacheHits and CacheMisses count rows found and not found in the
	// decoded-row cache; CacheBytes and CacheRows are what it holds.
	CacheHits, CacheMisses, CacheBytes, CacheRows int64
	// Trusted counts rows answered from the row cache without a Get, their
	// hour unwritten since they were read (trust.go).
	Trusted int64
	// Recorded counts rows, stored or in the head, answered from a
	// series' record: one lookup for the series instead of one a row
	// (trustseries.go).
	Recorded int64
	// CacheReserve is the memory ready for the row cache's new entries
	// (Options.RowCacheReserve, reserve.go), in bytes.
	CacheReserve int64
	// Moved counts cached head rows handed on to the stored rows a flush
	// wrote from them (RowMoved).
	Moved int64
}

type counters struct {
	gets, scans, rows, corrupt, plansSeries, plansScan, trusted, recorded, moved atomic.Int64
}

// Reader reads series points from the store and the head. It is safe for
// concurrent use.
type Reader struct {
	opts    Options
	c       counters
	pool    sync.Pool // *rowReader
	iters   sync.Pool // *SeriesIterator, closed
	fetches sync.Pool // *fetchBuffers
	streams sync.Pool // *stream
	// families is the read options' family list, shared read-only by
	// every request.
	families []string
	cache    *rowCache // nil when Options.RowCacheBytes is -1
}

// New returns a Reader.
func New(opts *Options) (*Reader, error) {
	o := *opts
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &Reader{opts: o, families: []string{o.Family}, cache: newRowCache(o.RowCacheBytes, o.RowCacheReserve)}
	if r.cache != nil {
		r.cache.trust = newTrustIndex(o.Changes, r.cache.maxShard)
	}
	r.pool.New = func() any { return &rowReader{r: r} }
	r.iters.New = func() any { return &SeriesIterator{} }
	r.fetches.New = func() any { return &fetchBuffers{} }
	r.streams.New = func() any { return &stream{r: r} }
	return r, nil
}

// FillReserve starts filling the row cache's reserve now, in the
// background, instead of at the first read that finds it empty: a
// daemon that serves queries calls it as it starts, so that the first
// queries after a bulk load or a restart find resident memory for the
// rows they cache (reserve.go). It returns at once; without a reserve it
// does nothing.
func (r *Reader) FillReserve() {
	if r.cache != nil {
		r.cache.res.start()
	}
}

// Layout returns the data table's layout.
func (r *Reader) Layout() rowkey.Layout { return r.opts.Layout }

// Stats returns the counters.
func (r *Reader) Stats() Stats {
	s := Stats{Gets: r.c.gets.Load(), Scans: r.c.scans.Load(), Rows: r.c.rows.Load(),
		CorruptCells: r.c.corrupt.Load(), PlansSeries: r.c.plansSeries.Load(), PlansScan: r.c.plansScan.Load(),
		Trusted: r.c.trusted.Load(), Recorded: r.c.recorded.Load(), Moved: r.c.moved.Load()}
	if r.cache != nil {
		s.CacheHits, s.CacheMisses = r.cache.hits.Load(), r.cache.misses.Load()
		var n int
		s.CacheBytes, n = r.cache.size()
		s.CacheRows = int64(n)
		s.CacheReserve = r.cache.res.readyBytes()
	}
	return s
}

// DropCache empties the decoded-row cache (/api/dropcaches).
func (r *Reader) DropCache() {
	if r.cache != nil {
		r.cache.drop()
		if r.cache.trust != nil {
			r.cache.trust.drop()
		}
	}
}

// begin charges Read's and Visit's series to the budget and raises
// sel.Start to the retention cutoff; ok is false when there is nothing to
// read or on error.
func (r *Reader) begin(ctx context.Context, sel *Selection) (ok bool, err error) {
	if len(sel.Series) == 0 {
		return false, nil
	}
	if err := sel.Budget.AddSeries(len(sel.Series)); err != nil {
		return false, err
	}
	start, err := r.clampStart(ctx, sel.Series[0].TSUID, sel.Start)
	if err != nil || start > sel.End {
		return false, err
	}
	sel.Start = start
	return true, nil
}

// plan chooses sel's plan and counts it.
func (r *Reader) plan(sel *Selection) Plan {
	p := r.choose(*sel)
	r.countPlan(p)
	return p
}

// countPlan counts a plan run.
func (r *Reader) countPlan(p Plan) {
	if p == PlanScan {
		r.c.plansScan.Add(1)
	} else {
		r.c.plansSeries.Add(1)
	}
}

// Cost weights of the planner, in units of one row read by a scan: a Get
// is a seek plus a block read, a bucket scan a seek.
const (
	getCost  = 4
	seekCost = 8
)

// Choose returns the plan Read and Fetch would pick for sel. A caller
// that knows only the selection's size may ask with MetricSeries set to
// it: the scan's cost only grows with the metric, so PlanSeries then is
// final.
func (r *Reader) Choose(sel Selection) Plan { return r.choose(sel) }

// choose picks the plan.
func (r *Reader) choose(sel Selection) Plan {
	if sel.Plan != PlanAuto {
		return sel.Plan
	}
	if r.opts.Plan != PlanAuto {
		return r.opts.Plan
	}
	n := len(sel.Series)
	total := sel.MetricSeries
	if total < n {
		total = 10 * n
	}
	hours := (rowkey.BaseTime(sel.End)-rowkey.BaseTime(sel.Start))/3600 + 1
	gets := int64(n) * hours * getCost
	scan := int64(total)*hours + int64(r.buckets())*seekCost
	if gets <= scan {
		return PlanSeries
	}
	return PlanScan
}

// buckets is the number of salt buckets a metric's rows spread over.
func (r *Reader) buckets() int { return r.opts.Layout.Buckets() }

// Reading tells the reader that a read is about to begin, before any
// call reaches it: a query answered from an answer cache above the
// reader, or still being parsed. The row cache's reserve pauses the
// block it is making for a read that begins (reserve.go); the reader's
// own reads tell it too. Safe for concurrent use.
func (r *Reader) Reading() {
	if r.cache != nil {
		r.cache.res.reading()
	}
}

// clampStart raises start to the metric's retention cutoff. Every read
// begins here, so it also calls Reading.
func (r *Reader) clampStart(ctx context.Context, tsuid string, start int64) (int64, error) {
	r.Reading()
	if r.opts.Retention == nil {
		return start, nil
	}
	id, _, err := uid.ParseID([]byte(tsuid), r.opts.Layout.Widths.Metric)
	if err != nil {
		return 0, fmt.Errorf("read: series %x: %w", tsuid, err)
	}
	name, err := r.opts.UIDs.Name(ctx, uid.Metric, id)
	if err != nil {
		if errors.Is(err, uid.ErrNoSuchID) {
			return start, nil
		}
		return 0, err
	}
	if c := r.opts.Retention.Cutoff(name, r.opts.Now()); c != math.MinInt64 {
		return max(start, c), nil
	}
	return start, nil
}
