package grafana

import (
	"math"
	"slices"
)

// The OpenTSDB fixtures compute every expected value here, from the points
// the test wrote, with OpenTSDB 2.4's semantics (docs/opentsdb.md, HTTP
// API): each series is downsampled, then turned into a rate, then the
// members of a group are aggregated, interpolating linearly a member that
// has no point at a timestamp inside its own span.

// otsPoint is one point of the model: Unix seconds and value.
type otsPoint struct {
	T int64
	V float64
}

// otsSeries is one series the test writes.
type otsSeries struct {
	metric string
	tags   map[string]string
	pts    []otsPoint
	ints   bool // values are written as JSON/telnet integers
}

// otsDownsample buckets pts by t - t%interval and aggregates each bucket
// with agg (avg, sum, max).
func otsDownsample(pts []otsPoint, interval int64, agg string) []otsPoint {
	var out []otsPoint
	var vals []float64
	flush := func(t int64) {
		if len(vals) > 0 {
			out = append(out, otsPoint{t, otsAgg(agg, vals)})
			vals = vals[:0]
		}
	}
	cur := int64(math.MinInt64)
	for _, p := range pts {
		b := p.T - p.T%interval
		if b != cur {
			flush(cur)
			cur = b
		}
		vals = append(vals, p.V)
	}
	flush(cur)
	return out
}

// otsFill returns one point per interval from start to end inclusive
// (both aligned): the downsampled point where there is one, else fill.
func otsFill(ds []otsPoint, interval, start, end int64, fill float64) []otsPoint {
	var out []otsPoint
	i := 0
	for t := start; t <= end; t += interval {
		for i < len(ds) && ds[i].T < t {
			i++
		}
		if i < len(ds) && ds[i].T == t {
			out = append(out, ds[i])
			continue
		}
		out = append(out, otsPoint{t, fill})
	}
	return out
}

// otsRate is OpenTSDB's RateSpan: per-second rate between consecutive
// points; with counter, a drop is a reset: skipped with dropResets, else
// the delta wraps at counterMax.
func otsRate(pts []otsPoint, counter bool, counterMax float64, dropResets bool) []otsPoint {
	var out []otsPoint
	for i := 1; i < len(pts); i++ {
		d := pts[i].V - pts[i-1].V
		if counter && d < 0 {
			if dropResets {
				continue
			}
			d = counterMax - pts[i-1].V + pts[i].V
		}
		out = append(out, otsPoint{pts[i].T, d / float64(pts[i].T-pts[i-1].T)})
	}
	return out
}

// otsGroup aggregates the members at every timestamp any of them has; a
// member without a point there counts with its linear interpolation when
// the timestamp lies between two of its points, and not at all otherwise.
func otsGroup(members [][]otsPoint, agg string) []otsPoint {
	var ts []int64
	for _, m := range members {
		for _, p := range m {
			ts = append(ts, p.T)
		}
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	out := make([]otsPoint, 0, len(ts))
	for _, t := range ts {
		var vals []float64
		for _, m := range members {
			if v, ok := otsAt(m, t); ok {
				vals = append(vals, v)
			}
		}
		out = append(out, otsPoint{t, otsAgg(agg, vals)})
	}
	return out
}

// otsAt is the member's value at t, interpolated between its neighbours.
func otsAt(pts []otsPoint, t int64) (float64, bool) {
	i, found := slices.BinarySearchFunc(pts, t, func(p otsPoint, t int64) int { return int(p.T - t) })
	switch {
	case found:
		return pts[i].V, true
	case i == 0 || i == len(pts):
		return 0, false
	}
	a, b := pts[i-1], pts[i]
	return a.V + (b.V-a.V)*float64(t-a.T)/float64(b.T-a.T), true
}

// otsWindow keeps the points with start <= T <= end (seconds).
func otsWindow(pts []otsPoint, start, end int64) []otsPoint {
	var out []otsPoint
	for _, p := range pts {
		if p.T >= start && p.T <= end {
			out = append(out, p)
		}
	}
	return out
}

// otsAgg applies one of the aggregators the fixtures use.
func otsAgg(agg string, vals []float64) float64 {
	switch agg {
	case "sum":
		s := 0.0
		for _, v := range vals {
			s += v
		}
		return s
	case "avg":
		return otsAgg("sum", vals) / float64(len(vals))
	case "max":
		return slices.Max(vals)
	}
	panic("model has no aggregator " + agg)
}

// otsEach maps f over the members.
func otsEach(members []otsSeries, f func([]otsPoint) []otsPoint) [][]otsPoint {
	out := make([][]otsPoint, len(members))
	for i, s := range members {
		out[i] = f(s.pts)
	}
	return out
}
