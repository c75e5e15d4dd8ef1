package agg

import (
	"errors"
	"fmt"
	"math"
)

// ErrTimestampOrder is returned when a rate meets a timestamp that does not
// increase (OpenTSDB's RateSpan throws IllegalStateException).
var ErrTimestampOrder = errors.New("rate: timestamps must be strictly increasing")

// RateOptions are a rate's counter options (OpenTSDB's RateOptions).
type RateOptions struct {
	// Counter treats the series as a monotonic counter that may wrap or reset.
	Counter bool
	// CounterMax is the value a counter wraps at; DefaultRateOptions sets
	// math.MaxInt64. Only used with Counter.
	CounterMax int64
	// ResetValue, when above 0, turns a wrapped rate larger than it into 0.
	ResetValue int64
	// DropResets drops the rate across a counter decrease instead.
	DropResets bool
}

// DefaultRateOptions returns OpenTSDB's defaults: not a counter, CounterMax
// math.MaxInt64, ResetValue 0, DropResets false.
func DefaultRateOptions() RateOptions {
	return RateOptions{CounterMax: math.MaxInt64}
}

// rater turns a series into per-second rates (RateSpan). The first rate is
// taken from (t=0, v=0) to the first point, as OpenTSDB does.
type rater struct {
	opts RateOptions
	prev point
}

func (r *rater) reset(opts RateOptions) { *r = rater{opts: opts, prev: intPt(0, 0)} }

// step returns the rate from the previous point to p; keep is false when a
// counter reset is dropped.
func (r *rater) step(p point) (out point, keep bool, err error) {
	prev := r.prev
	if p.t <= prev.t {
		return point{}, false, fmt.Errorf("%w: Next timestamp (%d) is supposed to be  strictly greater than the previous one (%d), but it's not.",
			ErrTimestampOrder, p.t, prev.t)
	}
	r.prev = p
	dt := float64(p.t-prev.t) / 1000.0
	ints := !prev.float && !p.float
	var diff float64
	if ints {
		diff = float64(p.i64() - prev.i64())
	} else {
		diff = p.f64() - prev.f64()
	}
	if !r.opts.Counter || diff >= 0 {
		return floatPt(p.t, diff/dt), true, nil
	}
	if r.opts.DropResets {
		return point{}, false, nil
	}
	rate := r.wrapped(prev, p, ints) / dt
	if r.opts.ResetValue > 0 && rate > float64(r.opts.ResetValue) {
		rate = 0
	}
	return floatPt(p.t, rate), true, nil
}

// wrapped is the value change across a counter wrap: CounterMax - prev + p,
// in int64 arithmetic when both are integers.
func (r *rater) wrapped(prev, p point, ints bool) float64 {
	var diff float64
	if ints {
		diff = float64(r.opts.CounterMax - prev.i64() + p.i64())
	} else {
		diff = float64(r.opts.CounterMax) - prev.f64() + p.f64()
	}
	return diff
}
