package opentsdb

import (
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
)

// reader returns the reader of sq's read. Like OpenTSDB 2.4
// (TsdbQuery.configureFromQuery, resolveTagFilters and tableToBeScanned),
// a sub-query reads the pre-aggregation tables when it asks for them
// (preAggregate) or has a literal_or filter on the aggregate tag key whose
// text is not the raw value: "SUM" and "SUM|MAX" route, "RAW" does not
// (it reads the raw series tagged with tsd.rollups.tag_raw), and neither
// does any other filter type (a wildcard on the key reads raw data). A
// sub-query given as TSUIDs routes only on preAggregate, since OpenTSDB
// resolves no filters for it. A deleting query never routes: the
// deleter removes rows of the data table only.
func (x *executor) reader(q *tsquery.TSQuery, sq *tsquery.SubQuery) *read.Reader {
	o := &x.e.opts
	if o.PreAgg == nil || q.Delete || !preAggregate(sq, o.AggTagKey, o.RawAggTagValue) {
		return o.Reader
	}
	return o.PreAgg
}

// preAggregate reports whether sq reads pre-aggregated series.
func preAggregate(sq *tsquery.SubQuery, key, raw string) bool {
	if sq.PreAggregate {
		return true
	}
	if len(sq.TSUIDs) > 0 {
		return false
	}
	for _, f := range sq.Filters {
		if f.Type == tsquery.LiteralOr && f.Tagk == key && f.Filter != raw {
			return true
		}
	}
	return false
}
