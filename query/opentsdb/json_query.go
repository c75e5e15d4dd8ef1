package opentsdb

import (
	"strconv"

	"github.com/tsd-db/tsd/query/tsquery"
)

// appendSubQuery appends the showQuery echo of sq, in the field order of
// OpenTSDB's TSSubQuery bean. Grafana (tsdbVersion 3) maps results back
// to its targets by "index".
func appendSubQuery(dst []byte, sq *tsquery.SubQuery) []byte {
	dst = append(dst, `{"aggregator":`...)
	dst = appendString(dst, sq.Aggregator)
	dst = append(dst, `,"metric":`...)
	dst = appendNullString(dst, sq.Metric)
	dst = append(dst, `,"tsuids":`...)
	if len(sq.TSUIDs) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendStrings(dst, sq.TSUIDs)
	}
	dst = append(dst, `,"downsample":`...)
	dst = appendNullString(dst, sq.Downsample)
	dst = append(dst, `,"rate":`...)
	dst = strconv.AppendBool(dst, sq.Rate)
	dst = appendEchoFilters(append(dst, `,"filters":`...), sq.Filters)
	dst = append(dst, `,"index":`...)
	dst = strconv.AppendInt(dst, int64(sq.Index), 10)
	dst = appendEchoTags(append(dst, `,"tags":`...), sq.Filters)
	dst = appendEchoRate(append(dst, `,"rateOptions":`...), sq.RateOptions)
	dst = append(dst, `,"delete":false,"explicitTags":`...)
	dst = strconv.AppendBool(dst, sq.ExplicitTags)
	dst = append(dst, `,"useFuzzyFilter":`...)
	dst = strconv.AppendBool(dst, sq.UseFuzzyFilter)
	dst = append(dst, `,"percentiles":`...)
	dst = appendPercentiles(dst, sq.Percentiles)
	dst = append(dst, `,"showHistogramBuckets":`...)
	dst = strconv.AppendBool(dst, sq.ShowHistogramBuckets)
	dst = append(dst, `,"useMultiGets":`...)
	dst = strconv.AppendBool(dst, sq.UseMultiGets)
	dst = append(dst, `,"rollupUsage":`...)
	dst = appendNullString(dst, string(sq.RollupUsage))
	dst = append(dst, `,"preAggregate":`...)
	dst = strconv.AppendBool(dst, sq.PreAggregate)
	return append(dst, '}')
}

func appendNullString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s)
}

// appendEchoFilters appends the filters as TagVFilter beans.
func appendEchoFilters(dst []byte, fs []tsquery.Filter) []byte {
	dst = append(dst, '[')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"tagk":`...)
		dst = appendString(dst, f.Tagk)
		dst = append(dst, `,"filter":`...)
		dst = appendString(dst, f.Filter)
		dst = append(dst, `,"group_by":`...)
		dst = strconv.AppendBool(dst, f.GroupBy)
		dst = append(dst, `,"type":`...)
		dst = appendString(dst, f.Type)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendEchoTags appends the group-by filters as OpenTSDB's tags map,
// tagk to type(filter), the first filter of a key winning.
func appendEchoTags(dst []byte, fs []tsquery.Filter) []byte {
	dst = append(dst, '{')
	var seen []string
	for _, f := range fs {
		if !f.GroupBy || contains(seen, f.Tagk) {
			continue
		}
		if len(seen) > 0 {
			dst = append(dst, ',')
		}
		seen = append(seen, f.Tagk)
		dst = append(appendString(dst, f.Tagk), ':')
		dst = appendString(dst, f.Type+"("+f.Filter+")")
	}
	return append(dst, '}')
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func appendEchoRate(dst []byte, r *tsquery.RateOptions) []byte {
	if r == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"counter":`...)
	dst = strconv.AppendBool(dst, r.Counter)
	dst = append(dst, `,"counterMax":`...)
	dst = strconv.AppendInt(dst, r.CounterMax, 10)
	dst = append(dst, `,"resetValue":`...)
	dst = strconv.AppendInt(dst, r.ResetValue, 10)
	dst = append(dst, `,"dropResets":`...)
	dst = strconv.AppendBool(dst, r.DropResets)
	return append(dst, '}')
}

func appendPercentiles(dst []byte, ps []float32) []byte {
	if len(ps) == 0 {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, p := range ps {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJava(dst, float64(p), 32)
	}
	return append(dst, ']')
}
