// Package retention parses and evaluates tsd.storage.retention, tsd's
// per-metric retention rules (docs/opentsdb.md, "Storage and durability";
// docs/operations.md, Retention). It is pure: no I/O, no clock. The write path's retention job
// deletes what the rules expire; the query side filters with the same
// evaluator, so an expired point never shows even before the job runs.
//
// # Syntax
//
// A comma-separated list of rules, each `glob:duration`, for example
//
//	tmp.*:1d,sys.*:90d,*:forever
//
// The glob is matched against the whole metric name; `*` matches any run of
// characters (also none), every other character matches itself. A backslash
// makes the next character literal, so `\*`, `\,` and `\\` put a star, a
// comma or a backslash in a pattern. The duration follows the last colon of
// the rule, so patterns may contain colons (Prometheus recording rules:
// `job:*:1w`). Spaces around a rule, its glob and its duration are ignored.
//
// A rule may start with `@<interval> ` to apply to that rollup interval's
// table instead of raw data: `*:15d,@1h *:1y,@1d *:forever` keeps raw
// points 15 days, 1 h cells a year and 1 d cells for ever. Match and
// Cutoff evaluate the raw data's rules; ForInterval gives an interval's.
//
// A duration is `forever` or a positive integer and a unit, OpenTSDB's
// (DateTime.parseDuration): ms, s, m (minutes), h, d, w, n (30 days) or y
// (365 days). An empty setting has no rules.
//
// # Evaluation
//
// The first rule whose glob matches a metric decides; a metric no rule
// matches is kept forever. A point of a metric kept for D is expired at
// time now when its timestamp is before now - D (Cutoff), whatever its
// series' tags.
package retention
