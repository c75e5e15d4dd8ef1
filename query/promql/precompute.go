package promql

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
)

// Ahead-of-time window evaluation: a pushed-down Select of many series
// evaluates all of them when the engine iterates the first, on up to
// GOMAXPROCS goroutines (read.Fetched is safe for concurrent use), and
// keeps one point per non-empty window. The engine walks its series one
// after the other; decoding them in parallel cuts a large query's latency.
// The windows kept are no more than the engine's own result holds.
const (
	// minAheadSeries is the fewest series evaluated ahead.
	minAheadSeries = 8
	// seriesPerWorker is the fewest series per goroutine, and
	// rowsPerWorker the fewest hour rows (series × hours of the range): a
	// goroutine costs a wake-up, tens of microseconds on a busy VM, which
	// a few dozen rows from the row cache do not repay.
	seriesPerWorker = 4
	rowsPerWorker   = 256
	// maxAheadWindows bounds the windows kept, 24 bytes each.
	maxAheadWindows = 1 << 20
)

// aheadWindows is the evaluated windows of a metricRead's series.
type aheadWindows struct {
	once sync.Once
	pts  [][]series.Point // per series: one Float64 point per window
	err  error
}

// ahead reports whether mr's series are evaluated ahead.
func (mr *metricRead) ahead() bool {
	pd := mr.pd
	if pd == nil || len(mr.sel.Series) < minAheadSeries {
		return false
	}
	windows := int64(1)
	if pd.step > 0 {
		windows += (pd.last - pd.first) / pd.step
	}
	return windows*int64(len(mr.sel.Series)) <= maxAheadWindows
}

// windows returns series fi's evaluated windows, evaluating every series
// of mr on the first call.
func (mr *metricRead) windows(fi int) ([]series.Point, error) {
	mr.aw.once.Do(mr.evalAhead)
	if mr.aw.err != nil {
		return nil, mr.aw.err
	}
	return mr.aw.pts[fi], nil
}

// evalAhead evaluates every series' windows, the caller's goroutine and
// up to GOMAXPROCS-1 others taking series in turn; it returns when all are
// done.
func (mr *metricRead) evalAhead() {
	f, err := mr.fetched()
	if err != nil {
		mr.aw.err = err
		return
	}
	n := f.Len()
	mr.aw.pts = make([][]series.Point, n)
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		errMu sync.Mutex
	)
	hours := (mr.sel.End-mr.sel.Start)/time.Hour.Milliseconds() + 1
	workers := int(min(int64(runtime.GOMAXPROCS(0)), int64(n/seriesPerWorker), int64(n)*hours/rowsPerWorker))
	hint := arenaHint(mr.pd, (n+max(workers, 1)-1)/max(workers, 1))
	work := func() {
		if err := mr.evalSome(f, &next, hint); err != nil {
			errMu.Lock()
			if mr.aw.err == nil {
				mr.aw.err = err
			}
			errMu.Unlock()
		}
	}
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	mr.qr.q.stats.pushdownAhead.Add(1)
}

// maxArenaHint bounds the points an arena is first made with (1.5 MiB):
// past it, sparse series would leave most of a large one unused.
const maxArenaHint = 1 << 16

// arenaHint is the capacity of a goroutine's first arena for share series
// of pd's windows: each series has at most one window per step, and
// growing the arena from nothing cost a query of 8 series by 9 windows
// five allocations per goroutine.
func arenaHint(pd *pushdown, share int) int {
	windows := int64(1)
	if pd.step > 0 {
		windows += (pd.last - pd.first) / pd.step
	}
	return int(min(windows*int64(share), maxArenaHint))
}

// evalSome evaluates series taken from next until none is left or a read
// fails. Each series' windows are a slice of one arena per goroutine,
// first made with room for hint points.
func (mr *metricRead) evalSome(f *read.Fetched, next *atomic.Int64, hint int) error {
	var (
		w     windowIter
		it    *read.SeriesIterator
		arena = make([]series.Point, 0, hint)
	)
	defer func() {
		if it != nil {
			it.Close()
		}
	}()
	for {
		i := int(next.Add(1) - 1)
		if i >= f.Len() {
			return nil
		}
		it = f.Iterator(mr.ctx, i, it)
		w.reset(it, mr.pd)
		from := len(arena)
		for w.Next() == chunkenc.ValFloat {
			arena = append(arena, series.Float64Point(w.t, w.v))
		}
		if err := it.Err(); err != nil {
			return err
		}
		mr.aw.pts[i] = arena[from:len(arena):len(arena)]
	}
}
