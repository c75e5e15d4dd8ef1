package agg

import "errors"

// Spec describes one result group's computation.
type Spec struct {
	// Agg merges the series of the group. Required.
	Agg *Aggregator
	// Downsample, if not nil, downsamples each series first.
	Downsample *Downsample
	// Rate converts each series (after downsampling) to a per-second rate.
	Rate bool
	// RateOptions are the rate's counter options; the zero value means a
	// CounterMax of 0, so start from DefaultRateOptions.
	RateOptions RateOptions
	// QueryStart and QueryEnd are the user's range in ms, both inclusive.
	// Output is clipped to it, and an "all" downsampler covers
	// [QueryStart, QueryEnd).
	QueryStart, QueryEnd int64
	// Start and End are the aggregation window in ms, inclusive: the
	// points OpenTSDB scans, which reach past the query range so that the
	// edges interpolate. When both are 0, EnsureDefaults sets them with
	// ScanRange.
	Start, End int64
}

// ErrSpec is wrapped by Spec.Validate's errors.
var ErrSpec = errors.New("agg: bad spec")

// EnsureDefaults fills the aggregation window from the query range.
func (s *Spec) EnsureDefaults() {
	if s.Start == 0 && s.End == 0 {
		s.Start, s.End = ScanRange(s.QueryStart, s.QueryEnd, s.Downsample)
	}
}

// Validate reports a spec GroupBy cannot run.
func (s *Spec) Validate() error {
	switch {
	case s.Agg == nil:
		return errors.Join(ErrSpec, errors.New("no aggregator"))
	case s.Downsample != nil && (s.Downsample.Agg == nil || s.Downsample.Agg.IsNone()):
		return errors.Join(ErrSpec, errors.New("downsampling needs an aggregator other than none"))
	case s.Downsample != nil && !s.Downsample.All && s.Downsample.Interval <= 0:
		return errors.Join(ErrSpec, errors.New("downsampling interval must be positive"))
	case s.Downsample != nil && s.Downsample.Calendar && (s.Downsample.CalendarN < 1 || s.Downsample.CalendarUnit == 0):
		return errors.Join(ErrSpec, errors.New("calendar downsampling needs a unit"))
	case s.End < s.Start || s.QueryEnd < s.QueryStart:
		return errors.Join(ErrSpec, errors.New("end before start"))
	}
	return nil
}

// maxTimespan is a data row's width in seconds.
const maxTimespan = 3600

// ScanRange returns the aggregation window in ms that OpenTSDB 2.4
// (TsdbQuery.getScanStartTimeSeconds/getScanEndTimeSeconds) derives from a
// query range in ms: the start aligned down to the downsampling interval and
// then to the hour; the end one second later, aligned up past the next
// interval boundary and then to the hour (always forward, as OpenTSDB's
// half-open scan bound requires).
func ScanRange(queryStart, queryEnd int64, ds *Downsample) (start, end int64) {
	interval := int64(0)
	if ds != nil && !ds.All {
		interval = ds.Interval
	}
	return scanStart(queryStart/1000, interval) * 1000, scanEnd(queryEnd/1000+1, interval) * 1000
}

func scanStart(s, interval int64) int64 {
	if interval > 0 {
		s -= (1000 * s % interval) / 1000
	}
	s -= s % maxTimespan
	return max(s, 0)
}

func scanEnd(e, interval int64) int64 {
	if interval <= 0 {
		return e + (maxTimespan - e%maxTimespan)
	}
	aligned := e + (interval-(1000*e)%interval)/1000
	if off := aligned % maxTimespan; off != 0 {
		aligned += maxTimespan - off
	}
	return aligned
}
