// Package telnet parses OpenTSDB's telnet protocol lines: the command
// splitter for every command and the put line parser (docs/opentsdb.md,
// Telnet). The connection handler (reading lines, answering, acting on
// version, stats, help, dropcaches, exit, diediedie) lives elsewhere and
// calls these pure functions.
//
// # put
//
//	put <metric> <timestamp> <value> [<tagk=tagv> ...]
//
// Words are split on single spaces, so repeated spaces make empty words;
// empty words are skipped where tags are expected. The rules and messages
// are OpenTSDB's, checked in its order:
//
//   - at least 3 arguments after "put", else
//     "put: illegal argument: not enough arguments (need least 3, got N)",
//     N counting the words after "put" (a trailing space makes an empty
//     word). OpenTSDB needs 4 because it requires a tag; tsd allows a
//     series without tags (docs/opentsdb.md, "Names and series"), so
//     "put m 1 2" is a point, and Telegraf's tagless "put m 1 2 " (3
//     arguments and an empty word) is one too;
//   - an empty metric is "empty metric name";
//   - the timestamp has every '.' removed and is parsed as Tags.parseLong
//     ("put: invalid value: Invalid character 'x' in 12x"); it must be > 0
//     ("invalid timestamp: 0");
//   - an empty value is "empty value";
//   - each tag is k=v with exactly one '=' and both sides non-empty
//     ("invalid tag: k"); a repeated key with the same value is ignored, with
//     another value it is "duplicate tag: k=w, tags={k=v}";
//   - the value: text without '.', 'e', 'E' is a strict int64, else a double
//     stored as float32 when exact, float64 otherwise (parse.ParseOpenTSDBValue);
//     NaN and infinities are "value is NaN or Infinite: Infinity for
//     metric=m timestamp=t";
//   - a timestamp with any upper 32 bit set is milliseconds and must be at
//     most 9999999999999 ("bad timestamp=... when trying to add
//     value=[...]/flags to metric=m, tags={...}"), else seconds;
//   - more than Options.MaxTags tags (default 32, not OpenTSDB's 8) is
//     "Too many tags: N maximum allowed: 32, tags: {...}";
//   - the metric, then each tag key and value, must pass OpenTSDB's name
//     rules widened by tsd.core.tag.allow_specialchars
//     ("Invalid metric name (\"x!\"): illegal character: !").
//
// Failures are a *PutError whose Error is the whole reply line without its
// "\n": "put: invalid value: ..." for a number that does not parse (Java's
// NumberFormatException), "put: illegal argument: ..." for the rest.
// Tags print in line order (OpenTSDB prints its hash map's order).
//
// # Allocation and lifetime
//
// ParsePut fills a caller-owned parse.Point whose Metric and tags alias
// the line or, for tags equal to a recent good line's, the parser's copy
// of them: valid as long as the line is and until the parser's next
// ParsePut. A reused Point makes a good line cost no allocation; an error
// allocates its message.
package telnet
