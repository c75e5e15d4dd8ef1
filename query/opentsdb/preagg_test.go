package opentsdb

import (
	"testing"

	"github.com/tsd-db/tsd/query/tsquery"
)

// TestPreAggregate: which sub-queries read the pre-aggregation tables,
// after TsdbQuery.configureFromQuery (OpenTSDB 2.4): the preAggregate
// flag, or a TagVLiteralOrFilter on the key whose text is not the raw
// value; tsuid sub-queries resolve no filters.
func TestPreAggregate(t *testing.T) {
	lit := func(typ, k, v string) []tsquery.Filter { return []tsquery.Filter{{Type: typ, Tagk: k, Filter: v}} }
	for _, c := range []struct {
		name string
		sq   tsquery.SubQuery
		want bool
	}{
		{"none", tsquery.SubQuery{}, false},
		{"flag", tsquery.SubQuery{PreAggregate: true}, true},
		{"literal", tsquery.SubQuery{Filters: lit(tsquery.LiteralOr, "_aggregate", "SUM")}, true},
		{"literals", tsquery.SubQuery{Filters: lit(tsquery.LiteralOr, "_aggregate", "SUM|RAW")}, true},
		{"raw", tsquery.SubQuery{Filters: lit(tsquery.LiteralOr, "_aggregate", "RAW")}, false},
		{"iliteral", tsquery.SubQuery{Filters: lit(tsquery.ILiteralOr, "_aggregate", "sum")}, false},
		{"wildcard", tsquery.SubQuery{Filters: lit(tsquery.Wildcard, "_aggregate", "*")}, false},
		{"other key", tsquery.SubQuery{Filters: lit(tsquery.LiteralOr, "host", "SUM")}, false},
		{"tsuids", tsquery.SubQuery{TSUIDs: []string{"000001"}, Filters: lit(tsquery.LiteralOr, "_aggregate", "SUM")}, false},
	} {
		if got := preAggregate(&c.sq, "_aggregate", "RAW"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
