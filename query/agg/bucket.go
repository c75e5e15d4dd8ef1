package agg

// BucketStart returns the timestamp of the bucket holding t (ms): the
// query start qStart with All, the calendar bucket's start with
// Calendar, else t - t%Interval. Histogram downsampling, which sums
// whole histograms per bucket rather than folding values, uses it.
func (d *Downsample) BucketStart(t, qStart int64) int64 {
	switch {
	case d.All:
		return qStart
	case d.Calendar:
		return calFloor(t, d.CalendarN, d.CalendarUnit, d.loc()).UnixMilli()
	}
	return t - t%d.Interval
}
