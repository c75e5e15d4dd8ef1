package read

import (
	"errors"
	"strconv"
	"sync/atomic"
)

// ErrLimit is matched by every *LimitError.
var ErrLimit = errors.New("query limit exceeded")

// Limits bound one query. Zero means unlimited.
type Limits struct {
	// MaxSeries is the most series a query may read.
	MaxSeries int64
	// MaxPoints is the most points a query may read (OpenTSDB's
	// tsd.query.limits.data_points.default).
	MaxPoints int64
	// MaxBytes is the most bytes of points a query may hold, counted at
	// 16 bytes per point (tsd.query.limits.bytes.default).
	MaxBytes int64
}

// PointBytes is what one point is charged against Limits.MaxBytes.
const PointBytes = 16

// LimitError names the limit a query crossed. HTTP answers it with 413.
type LimitError struct {
	// Limit is "series", "data points" or "bytes".
	Limit string
	// Max is the configured limit.
	Max int64
}

// Error returns OpenTSDB's wording.
func (e *LimitError) Error() string {
	switch e.Limit {
	case "bytes":
		return "Sorry, you have attempted to fetch more than our limit of " + strconv.FormatInt(e.Max, 10) +
			" bytes of data. Please try filtering using more tags or decrease your time range."
	case "data points":
		return "Sorry, you have attempted to fetch more than our maximum amount of " +
			strconv.FormatInt(e.Max, 10) + " data points. Please try filtering using more tags or decrease your time range."
	}
	return "Sorry, you have attempted to fetch more than our limit of " + strconv.FormatInt(e.Max, 10) +
		" " + e.Limit + ". Please try filtering using more tags or decrease your time range."
}

// Is matches ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// Budget counts one query's reads against its Limits. It is safe for
// concurrent use; a nil *Budget is unlimited.
type Budget struct {
	limits Limits
	series atomic.Int64
	points atomic.Int64
}

// NewBudget returns a budget with nothing spent.
func NewBudget(l Limits) *Budget { return &Budget{limits: l} }

// Limits returns the budget's limits.
func (b *Budget) Limits() Limits {
	if b == nil {
		return Limits{}
	}
	return b.limits
}

// AddSeries charges n series.
func (b *Budget) AddSeries(n int) error {
	if b == nil {
		return nil
	}
	s := b.series.Add(int64(n))
	if m := b.limits.MaxSeries; m > 0 && s > m {
		return &LimitError{Limit: "series", Max: m}
	}
	return nil
}

// AddPoints charges n points (and their bytes).
func (b *Budget) AddPoints(n int) error {
	if b == nil {
		return nil
	}
	p := b.points.Add(int64(n))
	if m := b.limits.MaxPoints; m > 0 && p > m {
		return &LimitError{Limit: "data points", Max: m}
	}
	if m := b.limits.MaxBytes; m > 0 && p*PointBytes > m {
		return &LimitError{Limit: "bytes", Max: m}
	}
	return nil
}

// Spent returns the series and points charged so far.
func (b *Budget) Spent() (series, points int64) {
	if b == nil {
		return 0, 0
	}
	return b.series.Load(), b.points.Load()
}
