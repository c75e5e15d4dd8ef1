// Package last answers OpenTSDB 2.4's /api/query/last: the newest point of
// each selected series. It parses the request (GET timeseries=, tsuids=,
// resolve, back_scan; POST {"queries","resolveNames","backScan"}), selects
// series from the series index (uid/index Postings with one literal filter
// per tag: a series must carry every given tag value and may carry more),
// reads each series' newest point through read.Reader.Last (the head first,
// then the store's hour rows from the newest down) and writes OpenTSDB's
// JSON: [{"metric","timestamp","value","tags","tsuid"}], metric and tags
// only with resolve, the value a string (Java's Long.toString or
// Double.toString), the timestamp in ms.
//
// # Search range per series
//
//   - back_scan > 0: the current hour and back_scan hours before it, as
//     OpenTSDB does (Options.MaxBackScan bounds it, since each hour may
//     cost a read per series).
//   - back_scan 0: the hours the index records for the series, up to the
//     current hour unless the series lies wholly after it (OpenTSDB
//     reads only the hour of the meta table's last-write counter and finds
//     nothing when that row is empty; the index span is an upper bound, so
//     the walk goes down to the first row holding a point). A series whose
//     hours are unknown is searched over Options.NoSpanHours.
//
// # Differences from OpenTSDB, on purpose
//
//   - metric{tags} selects every series having those tags with both
//     back_scan forms (OpenTSDB, with back_scan > 0, reads only the series
//     with exactly those tags); each series is answered once per request.
//   - resolve names the series' own tags (OpenTSDB echoes the query's tags
//     for a metric query).
//   - A TSUID may have no tags (tsd allows tagless series).
//   - Errors are 400 *tsquery.Error with OpenTSDB's messages ("Missing sub
//     queries", "Unable to parse back_scan parameter", "Missing '}' at the
//     end of: ...", "No such name for 'metrics': 'x'", ...); malformed
//     input never causes a 500.
package last
