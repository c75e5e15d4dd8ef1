package tsquery

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// String describes the query like OpenTSDB's TSQuery.toString, the
// "details" of a validation error.
func (q *TSQuery) String() string {
	var b strings.Builder
	b.WriteString("TSQuery(start_time=" + q.Start + ", end_time=" + q.End + ", subQueries[")
	for i, sq := range q.Queries {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(sq.String())
	}
	b.WriteString("] padding=" + strconv.FormatBool(q.Padding))
	b.WriteString(", no_annotations=" + strconv.FormatBool(q.NoAnnotations))
	b.WriteString(", with_global_annotations=" + strconv.FormatBool(q.GlobalAnnotations))
	b.WriteString(", show_tsuids=" + strconv.FormatBool(q.ShowTSUIDs))
	b.WriteString(", ms_resolution=" + strconv.FormatBool(q.MsResolution))
	b.WriteString(", options=[])")
	return b.String()
}

// String describes the sub-query like TSSubQuery.toString.
func (sq *SubQuery) String() string {
	if sq == nil {
		return "null"
	}
	var b strings.Builder
	b.WriteString("TSSubQuery(metric=" + sq.Metric + ", filters=[")
	for i, f := range sq.Filters {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("filter_name=" + f.Type + ", tagk=" + f.Tagk + ", group_by=" + strconv.FormatBool(f.GroupBy) +
			", filter=" + f.Filter)
	}
	b.WriteString("], tsuids=[" + strings.Join(sq.TSUIDs, ", ") + "], agg=" + sq.Aggregator)
	b.WriteString(", downsample=" + nullIfEmpty(sq.Downsample) + ", rate=" + strconv.FormatBool(sq.Rate))
	b.WriteString(", rate_options=" + sq.RateOptions.String())
	b.WriteString(", explicit_tags=" + strconv.FormatBool(sq.ExplicitTags) + ", index=" + strconv.Itoa(sq.Index))
	b.WriteString(", percentiles=" + percentilesString(sq.Percentiles))
	b.WriteString(", show_histogram_buckets=" + strconv.FormatBool(sq.ShowHistogramBuckets) + ")")
	return b.String()
}

// String describes rate options like RateOptions.toString.
func (r *RateOptions) String() string {
	if r == nil {
		return "null"
	}
	return "counter=" + strconv.FormatBool(r.Counter) + ", counterMax=" + strconv.FormatInt(r.CounterMax, 10) +
		", resetValue=" + strconv.FormatInt(r.ResetValue, 10) + ", dropResets=" + strconv.FormatBool(r.DropResets)
}

func nullIfEmpty(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func percentilesString(p []float32) string {
	if p == nil {
		return "null"
	}
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = javaFloat(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// javaFloat formats like Java's Float.toString for the common cases: a
// whole number keeps ".0", small and large magnitudes use E notation.
func javaFloat(v float32) string {
	f := float64(v)
	abs := math.Abs(f)
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 0):
		return map[bool]string{true: "Infinity", false: "-Infinity"}[f > 0]
	case abs == 0 || (abs >= 1e-3 && abs < 1e7):
		s := strconv.FormatFloat(f, 'f', -1, 32)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 32), "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	sign := ""
	if strings.HasPrefix(exp, "-") {
		sign = "-"
	}
	return mant + "E" + sign + strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
}

// MString returns the sub-query as an m= (or tsuid=) parameter value that
// ParseM (or ParseTSUIDQuery) reads back to an equivalent sub-query.
func (sq *SubQuery) MString() string {
	parts := []string{sq.Aggregator}
	if sq.Rate {
		parts = append(parts, rateString(sq.RateOptions))
	}
	if sq.Downsample != "" {
		parts = append(parts, sq.Downsample)
	}
	if len(sq.Percentiles) > 0 {
		parts = append(parts, "percentiles"+percentilesString(sq.Percentiles))
	}
	if len(sq.TSUIDs) > 0 {
		if sq.ShowHistogramBuckets {
			parts = append(parts, "show-histogram-buckets")
		}
		return strings.Join(append(parts, strings.Join(sq.TSUIDs, ",")), ":")
	}
	parts = append(parts, sq.flagParts()...)
	return strings.Join(append(parts, sq.Metric+sq.filterBraces()), ":")
}

func (sq *SubQuery) flagParts() []string {
	var parts []string
	if sq.PreAggregate {
		parts = append(parts, "pre-agg")
	}
	if sq.RollupUsage != "" {
		parts = append(parts, strings.ToLower(string(sq.RollupUsage)))
	}
	if sq.ShowHistogramBuckets {
		parts = append(parts, "show-histogram-buckets")
	}
	if sq.ExplicitTags {
		parts = append(parts, "explicit_tags")
	}
	return parts
}

func rateString(r *RateOptions) string {
	if r == nil {
		return "rate"
	}
	counter := ""
	switch {
	case r.DropResets:
		counter = "dropcounter"
	case r.Counter:
		counter = "counter"
	}
	return "rate{" + counter + "," + strconv.FormatInt(r.CounterMax, 10) + "," + strconv.FormatInt(r.ResetValue, 10) + "}"
}

// filterBraces writes the group-by filters in the first braces and the
// others in the second, each as tagk=type(expr).
func (sq *SubQuery) filterBraces() string {
	var group, other []string
	for _, f := range sq.Filters {
		s := f.Tagk + "=" + f.Type + "(" + f.Filter + ")"
		if f.GroupBy {
			group = append(group, s)
		} else {
			other = append(other, s)
		}
	}
	switch {
	case len(other) > 0:
		return "{" + strings.Join(group, ",") + "}{" + strings.Join(other, ",") + "}"
	case len(group) > 0:
		return "{" + strings.Join(group, ",") + "}"
	}
	return ""
}

// key is what makes two sub-queries the same for OpenTSDB's LinkedHashSet
// (TSSubQuery.equals): everything the user sent but the index and the
// rollup usage.
func (sq *SubQuery) key() string {
	var b strings.Builder
	w := func(s string) { b.WriteString(strconv.Quote(s)) }
	w(sq.Aggregator)
	w(sq.Metric)
	w(strings.Join(sq.TSUIDs, "\x00"))
	w(sq.Downsample)
	w(sq.RateOptions.String())
	for _, f := range sq.Filters {
		w(f.Type + "\x00" + f.Tagk + "\x00" + f.canonical())
	}
	w(percentilesString(sq.Percentiles))
	for _, v := range []bool{sq.Rate, sq.ExplicitTags, sq.PreAggregate, sq.UseFuzzyFilter, sq.UseMultiGets, sq.ShowHistogramBuckets} {
		b.WriteString(strconv.FormatBool(v))
	}
	return b.String()
}

// dedupe drops sub-queries equal to an earlier one, keeping order.
func dedupe(qs []*SubQuery) []*SubQuery {
	seen := make(map[string]bool, len(qs))
	return slices.DeleteFunc(qs, func(sq *SubQuery) bool {
		k := sq.key()
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	})
}

// Dedupe drops sub-queries equal to an earlier one, keeping order, as
// OpenTSDB's GET parsing does with a LinkedHashSet (/api/query/gexp).
func Dedupe(qs []*SubQuery) []*SubQuery { return dedupe(qs) }
