package tsquery

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// ParseM parses the value of one m= parameter (QueryRpc.parseMTypeSubQuery).
func ParseM(s string) (*SubQuery, error) {
	if s == "" {
		return nil, badRequest("The query string was empty")
	}
	parts, err := splitParts(s)
	if err != nil {
		return nil, err
	}
	sq := NewSubQuery()
	sq.Aggregator = parts[0]
	if sq.Metric, sq.Filters, err = parseMetricAndFilters(parts[len(parts)-1]); err != nil {
		return nil, wrap(err)
	}
	for _, p := range parts[1 : len(parts)-1] {
		if err := sq.parseMiddle(s, p, true); err != nil {
			return nil, err
		}
	}
	return sq, nil
}

// ParseTSUIDQuery parses the value of one tsuid= parameter
// (QueryRpc.parseTsuidTypeSubQuery): <agg>:[...:]<tsuid>[,<tsuid>...].
func ParseTSUIDQuery(s string) (*SubQuery, error) {
	if s == "" {
		return nil, badRequest("The tsuid query string was empty")
	}
	parts, err := splitParts(s)
	if err != nil {
		return nil, err
	}
	sq := NewSubQuery()
	sq.Aggregator = parts[0]
	sq.TSUIDs = javaSplitComma(parts[len(parts)-1])
	for _, p := range parts[1 : len(parts)-1] {
		if err := sq.parseMiddle(s, p, false); err != nil {
			return nil, err
		}
	}
	return sq, nil
}

// splitParts splits on ':' keeping empty parts and checks there are 2 to 5.
func splitParts(s string) ([]string, error) {
	parts := strings.Split(s, ":")
	switch {
	case len(parts) < 2:
		return nil, badRequest("Invalid parameter m=" + s + " (not enough :-separated parts)")
	case len(parts) > 5:
		return nil, badRequest("Invalid parameter m=" + s + " (too many :-separated parts)")
	}
	return parts, nil
}

// parseMiddle applies one of the optional parts between the aggregator and
// the metric; unknown parts are ignored, as in OpenTSDB. The metric form
// also knows pre-agg, rollup_<usage> and explicit_tags.
func (sq *SubQuery) parseMiddle(whole, p string, metric bool) error {
	lower := strings.ToLower(p)
	var err error
	switch {
	case strings.HasPrefix(lower, "rate"):
		sq.Rate = true
		if strings.Contains(p, "{") {
			sq.RateOptions, err = parseRateOptions(p)
		}
	case p == "":
		return badRequest("Invalid parameter m=" + whole + " (empty :-separated part)")
	case p[0] >= '0' && p[0] <= '9':
		sq.Downsample = p
	case metric && strings.EqualFold(p, "pre-agg"):
		sq.PreAggregate = true
	case metric && strings.HasPrefix(lower, "rollup_"):
		sq.RollupUsage = ParseRollupUsage(p)
	case strings.HasPrefix(lower, "percentiles"):
		sq.Percentiles, err = parsePercentiles(p)
	case strings.HasPrefix(lower, "show-histogram-buckets"):
		sq.ShowHistogramBuckets = true
	case metric && strings.HasPrefix(lower, "explicit_tags"):
		sq.ExplicitTags = true
	}
	return err
}

// parseRateOptions reads rate{[drop]counter[,max[,reset]]}
// (QueryRpc.parseRateOptions), whose text between "rate{" and the last
// character is split on ','.
func parseRateOptions(spec string) (*RateOptions, error) {
	if len(spec) == 4 {
		r := DefaultRateOptions()
		return &r, nil
	}
	if len(spec) < 6 {
		return nil, badRequest("Invalid rate options specification: " + spec)
	}
	parts := strings.Split(spec[5:len(spec)-1], ",")
	if len(parts) > 3 {
		return nil, badRequest("Incorrect number of values in rate options specification, must be " +
			"counter[,counter max value,reset value], recieved: " + strconv.Itoa(len(parts)) + " parts")
	}
	r := &RateOptions{Counter: strings.HasSuffix(parts[0], "counter"), CounterMax: math.MaxInt64,
		DropResets: parts[0] == "dropcounter"}
	var err error
	if len(parts) >= 2 && parts[1] != "" {
		if r.CounterMax, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
			return nil, badRequest("Max value of counter was not a number, received '" + parts[1] + "'")
		}
	}
	if len(parts) >= 3 && parts[2] != "" {
		if r.ResetValue, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
			return nil, badRequest("Reset value of counter was not a number, received '" + parts[2] + "'")
		}
	}
	return r, nil
}

// parsePercentiles reads percentiles[p1, p2, ...] (QueryRpc.parsePercentiles)
// and sorts them, as TSSubQuery.setPercentiles does.
func parsePercentiles(spec string) ([]float32, error) {
	bad := badRequest("Malformated percentile query paramater: " + spec)
	start, end := strings.IndexByte(spec, '['), strings.IndexByte(spec, ']')
	if start < 0 || end < start {
		return nil, bad
	}
	var out []float32
	for _, s := range strings.Split(spec[start+1:end], ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
		if err != nil {
			return nil, bad
		}
		out = append(out, float32(v))
	}
	slices.Sort(out)
	return out, nil
}

// javaSplitComma is Java's split(","): trailing empty strings dropped.
func javaSplitComma(s string) []string {
	parts := strings.Split(s, ",")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// parseMetricAndFilters reads metric[{group-by filters}][{other filters}]
// (Tags.parseWithMetricAndFilters). The second braces are read first, so
// their filters come first.
func parseMetricAndFilters(s string) (string, []Filter, error) {
	if s == "" {
		return "", nil, badRequest("Metric cannot be null or empty")
	}
	curly := strings.IndexByte(s, '{')
	switch {
	case curly < 0:
		return s, nil, nil
	case s[len(s)-1] != '}':
		return "", nil, badRequest("Missing '}' at the end of: " + s)
	case curly == len(s)-2:
		return s[:len(s)-2], nil, nil
	}
	var filters []Filter
	closing := strings.IndexByte(s, '}')
	if closing < curly {
		// OpenTSDB throws StringIndexOutOfBoundsException here.
		return "", nil, badRequest("Missing '{' before '}' in: " + s)
	}
	if closing != len(s)-1 {
		open := strings.LastIndexByte(s, '{')
		for _, f := range strings.Split(s[open+1:len(s)-1], ",") {
			if f == "" {
				break
			}
			var err error
			if filters, err = addTag(filters, f, false); err != nil {
				return "", nil, badRequest("When parsing filter '" + f + "': " + err.Error())
			}
		}
	}
	for _, tag := range strings.Split(s[curly+1:closing], ",") {
		if tag == "" && closing != len(s)-1 {
			break
		}
		var err error
		if filters, err = addTag(filters, tag, true); err != nil {
			return "", nil, badRequest("When parsing tag '" + tag + "': " + err.Error())
		}
	}
	return s[:curly], filters, nil
}

// addTag parses k=v (Tags.parse) into a filter and appends it; a group-by
// filter equal to an existing one only marks that one group-by
// (TagVFilter.mapToFilters).
func addTag(filters []Filter, tag string, groupBy bool) ([]Filter, error) {
	kv := strings.Split(tag, "=")
	if len(kv) != 2 || kv[0] == "" || kv[1] == "" {
		return nil, badRequest("invalid tag: " + tag)
	}
	f, err := shorthandFilter(kv[0], kv[1], groupBy)
	if err != nil {
		return nil, err
	}
	return appendFilter(filters, f), nil
}

// appendFilter adds f, merging a group-by duplicate into the existing one.
func appendFilter(filters []Filter, f Filter) []Filter {
	if f.GroupBy {
		for i := range filters {
			if filters[i].equivalent(f) {
				filters[i].GroupBy = true
				return filters
			}
		}
	}
	return append(filters, f)
}
