// Package meta answers OpenTSDB's metadata questions that need the series
// index: /api/search/lookup (which series have this metric, tag key, tag
// value or pair) and /api/dropcaches (forget cached names in the UID table
// and the index). It sits in query because the api package may not import
// uid/index; api calls a Service.
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
package meta
