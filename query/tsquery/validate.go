package tsquery

import (
	"strconv"
	"time"

	"github.com/tsd-db/tsd/query/agg"
)

// ValidateOptions are the server settings validation needs.
type ValidateOptions struct {
	// Now is the current time in ms for "now", "-ago" and a missing end;
	// 0 means time.Now().
	Now int64
	// Location is the zone of absolute dates when the query names none
	// (tsd.core.timezone); nil means UTC.
	Location *time.Location
}

// Validate checks the query as TSQuery.validateAndSetQuery does, in
// OpenTSDB's order and with its messages, and sets StartTime, EndTime and
// each sub-query's Index, Agg and DS. The timezone and useCalendar apply to
// every downsampler. Errors are *Error with the query's description as
// details.
func (q *TSQuery) Validate(opts ValidateOptions) error {
	if err := q.validate(opts); err != nil {
		return withDetails(err, q.String())
	}
	return nil
}

func (q *TSQuery) validate(opts ValidateOptions) error {
	now := opts.Now
	if now == 0 {
		now = time.Now().UnixMilli()
	}
	if q.Start == "" {
		return badRequest("Missing start time")
	}
	var err error
	if q.StartTime, err = ParseTime(q.Start, q.Timezone, now, opts.Location); err != nil {
		return err
	}
	q.EndTime = now
	if q.End != "" {
		if q.EndTime, err = ParseTime(q.End, q.Timezone, now, opts.Location); err != nil {
			return err
		}
	}
	if q.EndTime <= q.StartTime {
		return badRequest("End time [" + strconv.FormatInt(q.EndTime, 10) +
			"] must be greater than the start time [" + strconv.FormatInt(q.StartTime, 10) + "]")
	}
	if len(q.Queries) == 0 {
		return badRequest("Missing queries")
	}
	for i, sq := range q.Queries {
		if err := q.validateSub(sq, opts.Location); err != nil {
			return err
		}
		sq.Index = i
	}
	return nil
}

// validateSub validates one sub-query and applies the query's timezone
// (else def, the server's tsd.core.timezone, when set) and calendar
// setting to its downsampler.
func (q *TSQuery) validateSub(sq *SubQuery, def *time.Location) error {
	if sq == nil {
		return badRequest("Missing the aggregation function")
	}
	if err := sq.Validate(); err != nil {
		return err
	}
	if sq.DS == nil {
		return nil
	}
	if q.Timezone != "" {
		loc, err := q.location()
		if err != nil {
			return badRequest("The timezone specification could not be found")
		}
		sq.DS.Location = loc
	} else if def != nil {
		sq.DS.Location = def
	}
	if q.UseCalendar {
		return wrapErr(sq.DS.SetCalendar())
	}
	return nil
}

func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	return wrap(err)
}

// Validate checks one sub-query (TSSubQuery.validateAndSetQuery) and sets
// Agg and DS.
func (sq *SubQuery) Validate() error {
	if sq.Aggregator == "" {
		return badRequest("Missing the aggregation function")
	}
	a, ok := agg.Lookup(sq.Aggregator)
	if !ok {
		return badRequest("No such aggregation function: " + sq.Aggregator)
	}
	sq.Agg = a
	if len(sq.TSUIDs) == 0 && sq.Metric == "" {
		return badRequest("Missing the metric or tsuids, provide at least one")
	}
	for _, f := range sq.Filters {
		if err := f.Validate(); err != nil {
			return err
		}
	}
	sq.DS = nil
	if sq.Downsample != "" {
		d, err := agg.ParseDownsample(sq.Downsample)
		if err != nil {
			return wrap(err)
		}
		sq.DS = &d
	}
	return sq.checkHistogram()
}

// checkHistogram applies OpenTSDB's limits on histogram queries (those with
// percentiles or showHistogramBuckets).
func (sq *SubQuery) checkHistogram() error {
	if len(sq.Percentiles) == 0 && !sq.ShowHistogramBuckets {
		return nil
	}
	if name := sq.Agg.Name(); name != "none" && name != "sum" {
		return badRequest("Only NONE or SUM aggregation function supported for histogram query")
	}
	if sq.DS != nil && sq.DS.Agg.Name() != "sum" {
		return badRequest("Only SUM downsampling aggregation supported for histogram query")
	}
	for _, p := range sq.Percentiles {
		if p < 0 || p > 100 {
			return badRequest("Invalid percentile parameters: " + javaFloat(p))
		}
	}
	return nil
}

// Spec returns the query/agg computation of sub-query sq of q, which must
// have been validated: the group aggregator, downsampler, rate and the
// query range with OpenTSDB's scan window.
func (q *TSQuery) Spec(sq *SubQuery) agg.Spec {
	s := agg.Spec{
		Agg:         sq.Agg,
		Downsample:  sq.DS,
		Rate:        sq.Rate,
		RateOptions: sq.AggRateOptions(),
		QueryStart:  q.StartTime,
		QueryEnd:    q.EndTime,
	}
	s.EnsureDefaults()
	return s
}
