package agg

// CellsServe reports whether spec's downsampling can be folded from
// rollup cells of intervalMs (each the count, sum, min and max of a
// series' points over one interval): downsampling by a fixed interval
// that is a multiple of intervalMs (so no cell straddles two buckets) with
// sum, count, min, max or avg, or mimmin and mimmax (a min and a max
// within a bucket), as OpenTSDB's rollup queries serve them.
func CellsServe(spec *Spec, intervalMs int64) bool {
	ds := spec.Downsample
	if !PushSpec(spec) || ds.All || intervalMs <= 0 || ds.Interval%intervalMs != 0 {
		return false
	}
	switch ds.Agg.name {
	case "sum", "count", "min", "max", "avg", "mimmin", "mimmax":
		return true
	}
	return false
}

// PushCell folds one cell of the series into its buckets: n points
// starting at t adding up to sum, the least min and the greatest max, all
// within one bucket (CellsServe), in time order after everything pushed
// before. The bucket gets what pushing the cell's points would give it,
// but for rounding: sums of floats are added cell by cell.
func (b *Buckets) PushCell(t, n int64, sum, min, max float64) {
	if t < b.from || n <= 0 {
		return
	}
	if !b.kept {
		b.kept, b.first = true, t
	}
	if !b.open || t >= b.bEnd {
		b.close()
		b.bStart = b.align(t)
		b.bEnd, b.open = b.bStart+b.ds.Interval, true
	}
	c := &b.acc
	switch c.agg.kind {
	case kSum, kAvg:
		c.f += sum
		c.n += n
	case kCount:
		c.n += n
	case kMin:
		if min < c.f {
			c.f = min
		}
	case kMax:
		if max > c.f {
			c.f = max
		}
	}
	c.all += n
}
