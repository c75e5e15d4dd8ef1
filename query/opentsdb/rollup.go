package opentsdb

import (
	"context"
	"sync/atomic"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rollup"
)

// rollupRead downsamples a sub-query's series from rollup cells
// (read.Reader.VisitCells into agg.Buckets.PushCell): each bucket gets
// the cells of its intervals instead of their raw points.
type rollupRead struct {
	s []fusedSeries
	// need is the aggregates the downsampler reads (a bit per
	// rollup.Agg): cells lacking one are skipped, as OpenTSDB reads only
	// the columns of the aggregator asked for (sum and count for avg).
	need uint8
	used atomic.Int64 // cells pushed
}

// Cells implements read.CellVisitor.
func (f *rollupRead) Cells(i int, cells []rollup.Cell) error {
	s := &f.s[i]
	used := 0
	for k := range cells {
		c := &cells[k]
		if c.Missing&f.need != 0 {
			continue
		}
		n := c.Count
		if !c.Has(rollup.Count) {
			n = 1 // a sum, min or max cell: its points are not counted
		}
		s.b.PushCell(c.T, n, c.Sum.Float(), c.Min.Float(), c.Max.Float())
		s.n += int(n)
		used++
	}
	f.used.Add(int64(used))
	return nil
}

// cellsNeeded is the aggregates downsampler name reads from a cell.
func cellsNeeded(name string) uint8 {
	switch name {
	case "sum":
		return 1 << rollup.Sum
	case "count":
		return 1 << rollup.Count
	case "min", "mimmin":
		return 1 << rollup.Min
	case "max", "mimmax":
		return 1 << rollup.Max
	}
	return 1<<rollup.Sum | 1<<rollup.Count // avg
}

// readRollup answers sq's read from rollup cells when OpenTSDB 2.4 would
// (TsdbQuery.transformDownSamplerToRollupQuery): rollups configured, a
// fixed downsampling interval, rollupUsage not ROLLUP_RAW, and the
// longest configured interval equal to or dividing the downsampling
// interval not the default (raw) one. With ROLLUP_FALLBACK an interval
// whose table holds no cell for the selection gives way to the next
// candidate, with ROLLUP_FALLBACK_RAW to raw data. served is false when
// the raw read must run; table names the table that answered.
func (x *executor) readRollup(ctx context.Context, q *tsquery.TSQuery, sq *tsquery.SubQuery, sel *selection, spec agg.Spec, budget *read.Budget) (served bool, table string, err error) {
	rd := x.rd
	cfg := rd.Rollups()
	usage, _ := rollup.ParseUsage(string(sq.RollupUsage))
	if cfg == nil || usage == rollup.Raw || q.Delete || !agg.PushSpec(&spec) || spec.Downsample.All ||
		spec.Downsample.Interval%1000 != 0 {
		return false, "", nil
	}
	var buf [8]*rollup.Interval
	cands := cfg.Candidates(buf[:0], spec.Downsample.Interval/1000)
	for k, iv := range cands {
		if iv.Default || !agg.CellsServe(&spec, iv.Seconds*1000) {
			return false, "", nil
		}
		clear(x.members)
		x.members = x.members[:0]
		f := &x.rollup
		if cap(f.s) < len(sel.series) {
			f.s = make([]fusedSeries, len(sel.series))
		}
		f.s = f.s[:len(sel.series)]
		f.need = cellsNeeded(spec.Downsample.Agg.Name())
		f.used.Store(0)
		room := bucketsRoom(&spec, len(f.s))
		for i := range f.s {
			f.s[i].b.Reset(spec)
			f.s[i].b.Grow(room)
			f.s[i].notes, f.s[i].n = nil, 0
		}
		rsel := read.Selection{Series: sel.series, Start: spec.Start, End: spec.End - 1,
			MetricSeries: sel.metricSeries, Budget: budget}
		st, err := rd.VisitCells(ctx, rsel, indexOf(cfg, iv), f)
		if err != nil {
			return false, "", err
		}
		last := k == len(cands)-1 || cands[k+1].Default
		switch {
		case f.used.Load() > 0 || usage == rollup.NoFallback:
		case usage == rollup.FallbackRaw || (usage == rollup.Fallback && last):
			return false, "", nil
		default: // Fallback: the next candidate
			continue
		}
		for i := range f.s {
			s := &f.s[i]
			if s.n == 0 {
				continue
			}
			s.b.Finish()
			x.members = append(x.members, member{s: sel.series[i], bk: &s.b, points: true})
		}
		return true, st.Table, nil
	}
	return false, "", nil
}

// maxBucketsRoom bounds the buckets readRollup makes room for before the
// cells arrive, over all series: 24 MiB of points.
const maxBucketsRoom = 1 << 20

// bucketsRoom is the room each of n series' buckets gets before its cells
// arrive: every bucket of the range while the n series' together stay
// within maxBucketsRoom (a month of hours for a thousand series), else
// none, the buckets growing as cells come.
func bucketsRoom(spec *agg.Spec, n int) int {
	per := (spec.End-spec.Start)/spec.Downsample.Interval + 1
	if per*int64(n) > maxBucketsRoom {
		return 0
	}
	return int(per)
}

func indexOf(cfg *rollup.Config, iv *rollup.Interval) int {
	for i := range cfg.Intervals {
		if &cfg.Intervals[i] == iv {
			return i
		}
	}
	return -1
}
