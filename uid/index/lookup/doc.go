// Package lookup answers OpenTSDB's metadata questions that need the series
// index and the UID table together: /api/search/lookup (which series have
// this metric, tag key, tag value or pair), /api/dropcaches (forget cached
// names in the UID table, the index and the other name caches) and a
// rename that all of them see at once. It is the index's service to the
// network edge: api calls a Service and never reaches the index itself
// (docs/architecture.md gives the import rules).
//
// # Lookup
//
// A lookup names a metric (or * for every metric) and tag pairs, parsed from
// m=<metric>{k=v,...} as OpenTSDB's Tags.parseWithMetric does or from
// {"metric","tags":[{"key","value"}],"limit"}. Semantics follow OpenTSDB's
// TimeSeriesLookup:
//
//   - pairs with a key are ANDed across keys and ORed within one key
//     (host=a,host=b means host is a or b); a value * (or missing, "host=")
//     means the key is present with any value and overrides the key's
//     literal values;
//   - pairs without a key (*=web01 or =web01) are ORed among themselves and
//     ANDed with the rest: the series has some tag whose value is one of
//     them;
//   - every literal name must have a UID: an unknown name is ErrUnknownName
//     (OpenTSDB's 404 "Unable to resolve one or more UIDs").
//
// It is answered from the in-memory postings of uid/index (Postings,
// ForEach), never by scanning the data table: OpenTSDB's use_meta=true,
// whatever the request says. Results are in TSUID byte order and hold the
// first Limit (default 25; 0 or less is no limit) matches, resolved to
// names; TotalResults counts them, as OpenTSDB's does (its TimeSeriesLookup
// stops at the limit).
//
// # TSMeta
//
// Every series of the index has a TSMeta (uid/tsmeta holds its fields and
// counters); so does a series whose TSMeta was created by name
// (create=true) without data. GetTSMeta, UpdateTSMeta and DeleteTSMeta
// add the UIDMeta of the metric and tags as OpenTSDB's TSMeta.getTSMeta
// does; LookupTSUIDs selects series for GET ?m= with lookup's rules.
//
// # Searches
//
// SearchSeries (tsmeta, tsmeta_summary, tsuids), SearchSpans (annotation)
// and SearchUIDMeta answer OpenTSDB's search plugin endpoints without a
// plugin. A series search takes lookup's metric{tagk=value} form with *
// globs on every name (search.go gives the rules); the index's wildcard
// filters narrow the candidates and each glob is then checked on the
// candidate's names, so only the names of candidates are resolved.
// Results are in TSUID order; the total counts every match, the page is
// [start, start+limit).
package lookup
