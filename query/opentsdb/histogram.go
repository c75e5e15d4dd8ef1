package opentsdb

import (
	"context"
	"slices"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey/hist"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// A histogram sub-query (percentiles or show-histogram-buckets) reads
// OpenTSDB 2.4's histogram cells instead of points and answers as
// TsdbQuery.runHistogramAsync does: the group's histograms are
// downsampled per series (each bucket's histograms summed, stamped with
// the bucket's start), then summed across the group's series at equal
// timestamps (no interpolation), and every group gives one result series
// per percentile, named <metric>_pct_<p> (p as Java's Float.toString:
// 99.0, 99.9), ascending, then with show-histogram-buckets one per bucket
// of the group's first histogram: <metric>_UNDERFLOW, <metric>_<lo>_<hi>
// in bucket order, <metric>_OVERFLOW, each a bucket's count (0 where a
// histogram lacks it). Only sum and none aggregate, only sum downsamples
// (tsquery refuses the rest); rate and fill policies do not apply.

// histPoint is one decoded histogram of a series.
type histPoint struct {
	t int64
	h hist.Histogram
}

// isHistogram reports a histogram sub-query.
func isHistogram(sq *tsquery.SubQuery) bool {
	return len(sq.Percentiles) > 0 || sq.ShowHistogramBuckets
}

// prepareHist reads and groups the histograms of the run's sub-query.
func (x *executor) prepareHist(ctx context.Context, r *run, res *Result, sq *tsquery.SubQuery, sel *selection) error {
	table := x.rd.Table()
	r.st.table(table)
	res.setTable(sq.Index, table)
	if err := x.readHist(ctx, sel, r.spec, r.budget); err != nil {
		return err
	}
	r.st.readDone()
	x.group(sel, sq.Agg.IsNone())
	r.st.lap(groupTime)
	r.ready = true
	return nil
}

// readHist decodes the selected series' histograms in the window into
// x.members. A cell that does not decode (or names a codec not
// configured) is left out, as a corrupt point is.
func (x *executor) readHist(ctx context.Context, sel *selection, spec agg.Spec, budget *read.Budget) error {
	clear(x.members)
	x.members = x.members[:0]
	codecs := x.e.opts.Histograms
	rsel := read.Selection{Series: sel.series, Start: spec.Start, End: spec.End - 1,
		MetricSeries: sel.metricSeries, Budget: budget}
	return x.rd.Histograms(ctx, rsel, func(s index.Series, cells []read.HistCell) error {
		hs := make([]histPoint, 0, len(cells))
		for _, c := range cells {
			var h hist.Histogram
			if codecs.DecodeValue(&h, c.Value) != nil {
				continue
			}
			hs = append(hs, histPoint{t: c.T, h: h})
		}
		x.members = append(x.members, member{s: s, hists: hs, points: len(hs) > 0})
		return nil
	})
}

// aggregateHist sums the group idx's histograms and appends its result
// series to res; false when none has a histogram in the query range.
func (x *executor) aggregateHist(ctx context.Context, r *run, idx []int, res *Result) (bool, error) {
	sum := x.sumHist(r.spec, idx)
	if len(sum) == 0 {
		return false, nil
	}
	sq, metric := r.q.Queries[r.sub], x.sels[r.sub].metric
	n := 0
	emit := func(name string, value func(h *hist.Histogram, t int64) series.Point) error {
		g := res.addGroup(sq, name)
		for i := range sum {
			res.points = append(res.points, value(&sum[i].h, sum[i].t))
		}
		n += len(sum)
		res.endGroup(g)
		return x.describe(ctx, g, idx, res)
	}
	ps := slices.Clone(sq.Percentiles)
	slices.Sort(ps)
	for _, p := range ps {
		name := metric + "_pct_" + string(jsonw.AppendJavaFloat(nil, p))
		if err := emit(name, func(h *hist.Histogram, t int64) series.Point {
			return series.Float64Point(t, h.Percentile(float64(p)))
		}); err != nil {
			return false, err
		}
	}
	if sq.ShowHistogramBuckets {
		first := sum[0].h.Clone()
		if err := emit(metric+"_UNDERFLOW", func(h *hist.Histogram, t int64) series.Point {
			return series.IntPoint(t, h.Underflow)
		}); err != nil {
			return false, err
		}
		for _, b := range first.Buckets {
			name := metric + "_" + string(jsonw.AppendJavaFloat(nil, b.Lo)) + "_" + string(jsonw.AppendJavaFloat(nil, b.Hi))
			if err := emit(name, func(h *hist.Histogram, t int64) series.Point {
				return series.IntPoint(t, h.Count(b.Lo, b.Hi))
			}); err != nil {
				return false, err
			}
		}
		if err := emit(metric+"_OVERFLOW", func(h *hist.Histogram, t int64) series.Point {
			return series.IntPoint(t, h.Overflow)
		}); err != nil {
			return false, err
		}
	}
	return true, x.checkOutput(ctx, r, n)
}

// sumHist downsamples each member's histograms and sums them across the
// members at equal timestamps, in time order, clipped to the query
// range.
func (x *executor) sumHist(spec agg.Spec, idx []int) []histPoint {
	var out []histPoint
	for _, m := range idx {
		for _, p := range downsampleHist(x.members[m].hists, spec) {
			i, found := slices.BinarySearchFunc(out, p.t, func(a histPoint, t int64) int { return cmpInt64(a.t, t) })
			if found {
				out[i].h.Add(&p.h)
				continue
			}
			out = slices.Insert(out, i, histPoint{t: p.t, h: p.h.Clone()})
		}
	}
	lo, _ := slices.BinarySearchFunc(out, spec.QueryStart, func(a histPoint, t int64) int { return cmpInt64(a.t, t) })
	hi, _ := slices.BinarySearchFunc(out, spec.QueryEnd+1, func(a histPoint, t int64) int { return cmpInt64(a.t, t) })
	return out[lo:hi]
}

// downsampleHist sums a series' histograms per downsampling bucket, as
// HistogramDownsampler does; without a downsampler it returns pts.
func downsampleHist(pts []histPoint, spec agg.Spec) []histPoint {
	ds := spec.Downsample
	if ds == nil {
		return pts
	}
	var out []histPoint
	for _, p := range pts {
		if ds.All && (p.t < spec.QueryStart || p.t >= spec.QueryEnd) {
			continue
		}
		t := ds.BucketStart(p.t, spec.QueryStart)
		if n := len(out); n > 0 && out[n-1].t == t {
			out[n-1].h.Add(&p.h)
			continue
		}
		out = append(out, histPoint{t: t, h: p.h.Clone()})
	}
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
