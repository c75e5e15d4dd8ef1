// Package tsquery is OpenTSDB 2.4's /api/query request: the TSQuery and
// TSSubQuery model, the POST JSON parser, the GET grammar (m= and tsuid=),
// tag-value filters, time parsing and validation, all without storage. The
// HTTP layer maps every *Error to 400 with Error.Msg as the message.
//
// # Grammar
//
//	m=<agg>:[rate[{[drop]counter[,<max>[,<reset>]]}]:][<downsample>:]
//	  [percentiles[<p>,...]:][pre-agg:][rollup_<usage>:][show-histogram-buckets:]
//	  [explicit_tags:]<metric>[{<group-by filters>}][{<other filters>}]
//	tsuid=<agg>:[rate...:][<downsample>:]<tsuid>[,<tsuid>...]
//
// Parts are split on ':' (2 to 5 of them); the middle ones may come in any
// order and unknown ones are ignored, as OpenTSDB does. A filter is k=v or
// k=v1|v2 (literal_or), k=* (wildcard, any value), k=ab* (any '*':
// case-insensitive wildcard) or k=type(expr).
//
// # Times
//
// now, <n><unit>-ago, yyyy/MM/dd[-HH:mm[:ss]] (or with a space) in the
// query's timezone, <n>ms, an integer epoch (10 digits or fewer are seconds,
// more are milliseconds) and <10 digits>.<1-3 digits>. Negative times are
// refused. Results are milliseconds since the epoch.
//
// # Differences from OpenTSDB, on purpose
//
//   - "1234567890.5" is 1234567890500 ms; OpenTSDB 2.4 drops the dot and
//     reads 12345678905 ms.
//   - Malformed input that makes OpenTSDB throw an unchecked exception (an
//     empty ':'-part, a bad percentile number, an overflowing "<n>ms") is a
//     400 *Error here, never a 500.
//   - JSON field names match case-insensitively and unknown fields are
//     ignored.
//   - The k=ab* shorthand is reported as type iwildcard (OpenTSDB builds a
//     case-insensitive filter but names it "wildcard"). Wildcard components
//     must occur in order; OpenTSDB's match advances by component length
//     only and can accept out-of-order values.
//   - The timezone database is embedded (time/tzdata), so names resolve the
//     same on every host.
package tsquery
