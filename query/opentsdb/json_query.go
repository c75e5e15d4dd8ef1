package opentsdb

import (
	"slices"
	"strconv"

	"github.com/tsd-db/tsd/internal/jsonw"

	"github.com/tsd-db/tsd/query/tsquery"
)

// appendSubQuery appends the showQuery echo of sq, in the field order of
// OpenTSDB's TSSubQuery bean. Grafana (tsdbVersion 3) maps results back
// to its targets by "index". A non-empty table (the table that served the
// sub-query: data, rollup or pre-aggregation) is tsd's own last field.
func appendSubQuery(dst []byte, sq *tsquery.SubQuery, table string) []byte {
	dst = append(dst, `{"aggregator":`...)
	dst = jsonw.Jackson.AppendString(dst, sq.Aggregator)
	dst = append(dst, `,"metric":`...)
	dst = jsonw.Jackson.AppendNullable(dst, sq.Metric)
	dst = append(dst, `,"tsuids":`...)
	if len(sq.TSUIDs) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = jsonw.Jackson.AppendStrings(dst, sq.TSUIDs)
	}
	dst = append(dst, `,"downsample":`...)
	dst = jsonw.Jackson.AppendNullable(dst, sq.Downsample)
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
	dst = jsonw.Jackson.AppendNullable(dst, string(sq.RollupUsage))
	dst = append(dst, `,"preAggregate":`...)
	dst = strconv.AppendBool(dst, sq.PreAggregate)
	if table != "" {
		dst = append(dst, `,"table":`...)
		dst = jsonw.Jackson.AppendString(dst, table)
	}
	return append(dst, '}')
}

// appendEchoFilters appends the filters as TagVFilter beans.
func appendEchoFilters(dst []byte, fs []tsquery.Filter) []byte {
	dst = append(dst, '[')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"tagk":`...)
		dst = jsonw.Jackson.AppendString(dst, f.Tagk)
		dst = append(dst, `,"filter":`...)
		dst = jsonw.Jackson.AppendString(dst, f.Filter)
		dst = append(dst, `,"group_by":`...)
		dst = strconv.AppendBool(dst, f.GroupBy)
		dst = append(dst, `,"type":`...)
		dst = jsonw.Jackson.AppendString(dst, f.Type)
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
		dst = jsonw.Jackson.AppendPair(dst, f.Tagk, f.Type+"("+f.Filter+")")
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
		dst = jsonw.AppendJavaFloat(dst, p)
	}
	return append(dst, ']')
}

// AppendQueryJSON appends q as OpenTSDB's TSQuery bean serializes, in its
// getters' order: what /api/stats/query lists as each query. Options are
// written sorted by name; an end left out is null, as in OpenTSDB.
func AppendQueryJSON(dst []byte, q *tsquery.TSQuery) []byte {
	dst = append(dst, `{"start":`...)
	dst = jsonw.Jackson.AppendNullable(dst, q.Start)
	dst = append(dst, `,"end":`...)
	dst = jsonw.Jackson.AppendNullable(dst, q.End)
	dst = append(dst, `,"timezone":`...)
	dst = jsonw.Jackson.AppendNullable(dst, q.Timezone)
	dst = appendQueryOptions(append(dst, `,"options":`...), q.Options)
	for _, b := range [...]struct {
		name string
		v    bool
	}{{"padding", q.Padding}, {"noAnnotations", q.NoAnnotations}, {"globalAnnotations", q.GlobalAnnotations},
		{"showTSUIDs", q.ShowTSUIDs}} {
		dst = strconv.AppendBool(append(append(append(dst, `,"`...), b.name...), `":`...), b.v)
	}
	dst = append(dst, `,"queries":[`...)
	for i, sq := range q.Queries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSubQuery(dst, sq, "")
	}
	dst = append(dst, ']')
	for _, b := range [...]struct {
		name string
		v    bool
	}{{"msResolution", q.MsResolution}, {"showQuery", q.ShowQuery}, {"showStats", q.ShowStats},
		{"showSummary", q.ShowSummary}, {"delete", q.Delete}, {"useCalendar", q.UseCalendar}} {
		dst = strconv.AppendBool(append(append(append(dst, `,"`...), b.name...), `":`...), b.v)
	}
	return append(dst, '}')
}

// appendQueryOptions appends the serializer options, a map of lists, or
// null when there are none.
func appendQueryOptions(dst []byte, opts map[string][]string) []byte {
	if opts == nil {
		return append(dst, "null"...)
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.Jackson.AppendKey(dst, k)
		dst = jsonw.Jackson.AppendStrings(dst, opts[k])
	}
	return append(dst, '}')
}
