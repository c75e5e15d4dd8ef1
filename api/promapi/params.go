package promapi

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// MaxPointsPerSeries is the most steps a range query may have, as in
// Prometheus: a week at 60 s or a year at 1 h.
const MaxPointsPerSeries = 11000

// Bounds used for a missing optional start or end. They are Prometheus's
// (web/api/v1 MinTime and MaxTime), so clients that send those values back
// formatted as RFC 3339 are understood.
var (
	MinTime = time.Unix(math.MinInt64/1000+62135596801, 0).UTC()
	MaxTime = time.Unix(math.MaxInt64/1000-62135596801, 999999999).UTC()

	minTimeText = MinTime.Format(time.RFC3339Nano)
	maxTimeText = MaxTime.Format(time.RFC3339Nano)
)

var (
	errNegativeLimit  = errors.New("limit must be non-negative")
	errEndBeforeStart = errors.New("end timestamp must not be before start time")
	errBadStep        = errors.New("zero or negative query resolution step widths are not accepted. Try a positive integer")
	errTooManyPoints  = errors.New("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")
	errEmptyMatcher   = errors.New("match[] must contain at least one non-empty matcher")
	errNoMatch        = errors.New("no match[] parameter provided")
)

// ParseTime parses a Prometheus API timestamp: Unix seconds as a decimal
// float (rounded to the millisecond) or RFC 3339 with optional fraction.
func ParseTime(s string) (time.Time, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return floatSecondsTime(s, f)
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	switch s {
	case minTimeText:
		return MinTime, nil
	case maxTimeText:
		return MaxTime, nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp", s)
}

// floatSecondsTime converts Unix seconds, refusing NaN and values whose
// milliseconds overflow int64 (they would wrap to the other end of time).
func floatSecondsTime(s string, f float64) (time.Time, error) {
	if math.IsNaN(f) || f > math.MaxInt64/1000 || f < math.MinInt64/1000 {
		return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp", s)
	}
	sec, frac := math.Modf(f)
	ms := math.Round(frac * 1000)
	return time.Unix(int64(sec), int64(ms)*int64(time.Millisecond)).UTC(), nil
}

// ParseDuration parses a Prometheus API duration: seconds as a decimal
// float, or a Prometheus duration such as "1h30m" or "15s".
func ParseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		ns := f * float64(time.Second)
		if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
			return 0, fmt.Errorf("cannot parse %q to a valid duration. It overflows int64", s)
		}
		return time.Duration(ns), nil
	}
	if d, err := model.ParseDuration(s); err == nil {
		return time.Duration(d), nil
	}
	return 0, fmt.Errorf("cannot parse %q to a valid duration", s)
}

// parseLimit parses the limit parameter; 0 (or absent) means no limit.
func parseLimit(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, errNegativeLimit
	}
	return n, nil
}

// parseTimeParam parses the optional time parameter name, def when
// absent; its error names the parameter a second time, as Prometheus's
// parseTimeParam does ("invalid time value for 'start': ...").
func parseTimeParam(s, name string, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
	t, err := ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time value for '%s': %w", name, err)
	}
	return t, nil
}

// rangeParams are a range query's start, end and step, checked as
// Prometheus checks them.
type rangeParams struct {
	start, end time.Time
	step       time.Duration
}

// parseRange parses and checks start, end and step; the error names the
// parameter at fault.
func parseRange(start, end, step string) (rangeParams, *apiError) {
	var r rangeParams
	var err error
	if r.start, err = ParseTime(start); err != nil {
		return r, invalidParam("start", err)
	}
	if r.end, err = ParseTime(end); err != nil {
		return r, invalidParam("end", err)
	}
	if r.end.Before(r.start) {
		return r, invalidParam("end", errEndBeforeStart)
	}
	if r.step, err = ParseDuration(step); err != nil {
		return r, invalidParam("step", err)
	}
	if r.step <= 0 {
		return r, invalidParam("step", errBadStep)
	}
	if r.end.Sub(r.start)/r.step > MaxPointsPerSeries {
		return r, badData(errTooManyPoints)
	}
	return r, nil
}

// parseMatchers parses match[] selectors; each set must have a matcher
// that does not match the empty string, so no set selects everything.
func parseMatchers(sel []string) ([][]*labels.Matcher, error) {
	sets, err := parser.ParseMetricSelectors(sel)
	if err != nil {
		return nil, err
	}
	for _, set := range sets {
		if !hasNonEmptyMatcher(set) {
			return nil, errEmptyMatcher
		}
	}
	return sets, nil
}

func hasNonEmptyMatcher(set []*labels.Matcher) bool {
	for _, m := range set {
		if m != nil && !m.Matches("") {
			return true
		}
	}
	return false
}
