package opentsdb

import (
	"errors"
	"strconv"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
)

// ErrOutputLimit is matched by every *OutputLimitError.
var ErrOutputLimit = errors.New("query output limit exceeded")

// OutputLimitError is an answer with more points than
// Options.MaxOutputPoints (tsd.query.limits.output_points). HTTP answers
// it 413 when it is known before the answer's first byte; a streamed
// answer that passes the limit is cut short instead.
type OutputLimitError struct {
	// Max is the limit.
	Max int64
	// Bound is the plan's bound on the answer's points when the query was
	// refused before reading; 0 when the limit was passed while answering.
	Bound int64
}

// Error says which limit and, for a refused plan, how far over it.
func (e *OutputLimitError) Error() string {
	msg := "Sorry, the answer has more than our limit of " + strconv.FormatInt(e.Max, 10) +
		" data points (tsd.query.limits.output_points)"
	if e.Bound > 0 {
		msg = "Sorry, the answer would have up to " + strconv.FormatInt(e.Bound, 10) +
			" data points, more than our limit of " + strconv.FormatInt(e.Max, 10) +
			" (tsd.query.limits.output_points)"
	}
	return msg + ". Please use a coarser downsampling interval, more tags or a shorter time range."
}

// Is matches ErrOutputLimit and read.ErrLimit: a crossed limit, the
// request's fault.
func (e *OutputLimitError) Is(target error) bool {
	return target == ErrOutputLimit || target == read.ErrLimit
}

// checkOutputBound refuses a query whose plan bounds its answer above
// Options.MaxOutputPoints: sub-queries downsampled by a fixed interval
// with a fill policy, or by "all", answer one point per bucket and group,
// so groups × buckets is known before reading. Groups are counted from
// the selected series (an upper bound: a series with no point in the
// range makes no group). Other answers are counted as they are made.
func (x *executor) checkOutputBound(q *tsquery.TSQuery) error {
	limit := x.e.opts.MaxOutputPoints
	if limit <= 0 {
		return nil
	}
	var bound int64
	for i, sq := range q.Queries {
		spec := q.Spec(sq)
		buckets := planBuckets(&spec)
		if buckets == 0 {
			continue
		}
		sel := x.sels[i]
		groups := int64(len(sel.series))
		if groups*buckets > limit { // the cheap bound is over: count the groups
			groups = x.countGroups(sel, sq.Agg.IsNone())
		}
		if bound += groups * buckets; bound > limit {
			return &OutputLimitError{Max: limit, Bound: bound}
		}
	}
	return nil
}

// planBuckets returns the most points a group of spec answers when the
// plan bounds it, else 0.
func planBuckets(spec *agg.Spec) int64 {
	ds := spec.Downsample
	switch {
	case ds == nil || ds.Calendar:
		return 0
	case ds.All:
		return 1
	case ds.Fill == agg.FillNone || ds.Interval <= 0:
		return 0
	}
	return (spec.QueryEnd-spec.QueryStart)/ds.Interval + 2
}

// countGroups counts the groups sel's series fall into, as group does.
func (x *executor) countGroups(sel *selection, none bool) int64 {
	if none {
		return int64(len(sel.series))
	}
	seen := map[string]struct{}{}
	var key []byte
	var m member
	for i := range sel.series {
		m.s = sel.series[i]
		m.tags = x.parseTags(m.tags[:0], m.s.TSUID)
		var ok bool
		if key, ok = x.groupKey(key[:0], &m, sel.groupBy, false); ok {
			seen[string(key)] = struct{}{}
		}
	}
	return int64(len(seen))
}
