// Package influx parses InfluxDB line protocol (1.x /write and 2.x
// /api/v2/write bodies, as Telegraf and the Influx client libraries send
// them) into parse.Point values, one per numeric field.
//
// # Grammar
//
//	measurement[,tagk=tagv...] fieldk=fieldv[,fieldk=fieldv...] [timestamp]
//
// Lines end in "\n" ("\r\n" accepted); blank lines and lines whose first
// non-blank byte is '#' are skipped. A string field value may hold
// newlines. Escapes: in the measurement "\," and "\ "; in tag keys, tag
// values and field keys "\," "\=" and "\ "; in string field values "\"" and
// "\\". A backslash before any other byte is kept literally, as InfluxDB
// keeps it, so Telegraf's two-character "\t" "\n" "\f" "\r" arrive as
// those two characters (which the lossless name rules accept; a real tab
// would not be).
//
// Field values: floats ("1", "-1.5e3", ".5"; kept as float64 with exact
// bits), integers "12i" (int64), unsigned "12u" (int64 when at most
// MaxInt64; above it a float64, the nearest double, as Prometheus would
// store it), booleans t T true True TRUE / f F false False FALSE (int 1 or
// 0), and strings "..." (skipped and counted in Stats.StringFields). NaN
// and infinities are refused. Timestamps are int64 in the request's
// precision (n, u, ms, s, m, h; default n), converted to milliseconds by
// truncation; a line without one takes the request time given to Reset,
// truncated to the precision. Timestamps before 1970 are refused: tsd
// stores none.
//
// # Output
//
// Each numeric field becomes one point: metric = measurement + separator
// (Options.Separator, default "_") + field key; tags in line order; names
// as sent (escapes resolved), checked with uid.RulesLossless (any printable
// UTF-8). Duplicate tag keys, more than Options.MaxTags tags, or a name
// the rules refuse make the line bad.
//
// # Errors
//
// A bad line never costs the good ones: the Decoder yields it as an item
// whose LineError names the line number and says what is wrong in
// InfluxDB's words ("unable to parse 'cpu,host=a usage=': missing field
// value (line 3)"), then goes on with the next line. Err reports only read
// errors, which stop the Decoder.
//
// # Allocation and lifetime
//
// In steady state the Decoder allocates nothing per line or point. A
// Point, its names and the current LineError alias the body or the
// Decoder's buffers and are valid until the next call to Next or Reset.
// Lines longer than Options.MaxLineBytes (default 1 MiB) are reported
// bad without being buffered whole.
package influx
