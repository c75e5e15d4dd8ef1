// Package promql serves PromQL over tsd: a Prometheus storage.Queryable
// (github.com/prometheus/prometheus/storage) reading the series index, the
// data table and the write path's head, and a promql.Engine with tsd's
// defaults. The Prometheus HTTP API (package api) and the PromQL tests run
// Prometheus's own engine on top of it.
//
// # Mapping
//
// A series' labels are its names: __name__ is the metric and every other
// label a tag, names and values stored losslessly (uid.RulesLossless on the
// Prometheus ingest paths). A label set comes from the series' TSUID, each
// UID named through uid.UIDs.Name, and is cached by TSUID
// (Options.LabelCacheSize); a UID renamed or deleted by another daemon is
// seen once the cache is emptied (DropCaches).
//
// # Select
//
// Label matchers become index.Filters resolved by bitmap algebra
// (index.Index.Postings): an = on __name__ picks the metric's postings,
// other matchers on __name__ filter under index.NameKey, matchers on a tag
// key the index does not know are decided on the empty value. The bitmap is
// narrowed to the series whose index span meets the selected time range,
// and every label set is then checked against the matchers with
// Prometheus's own semantics (dot matches newline, anchored expressions),
// so the index may over-select but never changes a result.
//
// The range read is SelectHints' [Start, End] (the querier's [mint, maxt]
// without hints), clipped to what tsd stores (0 to the row key's last
// second). Nothing is read until the engine iterates a series; then its
// metric's selected series go to read.Fetch, once: when they are most of
// the metric, one scan per salt bucket fetches their rows still encoded,
// otherwise each series Gets its rows as it goes. Each series' samples
// come from a lazy read.SeriesIterator: one hour row decoded at a time,
// merged with the head, so the engine's window holds only what it
// evaluates. The chunkenc adapter walks each decoded row as a slice, and
// the querier's Close returns iterators and fetched rows to the Reader.
//
// # Pushdown
//
// Under a context marked by WithPushdown (the HTTP API marks every query
// without a subquery or an anchored or smoothed selector), a Select whose
// hints name avg_over_time, min_over_time, max_over_time, sum_over_time,
// last_over_time or present_over_time (Func) over a range R evaluates the
// function itself, as Thanos does with SelectHints.Func. The engine reads
// a matrix selector over the windows (t-R, t] for t = Start+R-1, then
// every Step up to End (Start and End already carry offset and @); when
// no window holds another's end (Step >= R, or a single window: an
// instant query, Step 0, or an @ selector) each series returns one sample
// per non-empty window, at its end, holding the function's value over the
// window. Those functions return a lone sample's value (present_over_time
// any value), so the engine's answer is unchanged, computed from one
// sample per window instead of all of them. Values follow Prometheus
// v0.310's functions.go exactly: staleness markers dropped, Kahan-Neumaier
// sums (integers summed exactly in an int64 while within 2^53, the state
// the Kahan loop reaches; a span of a cached row from its block sums,
// read.SeriesIterator.BatchSum), avg's incremental mean after an overflow, NaN
// replaced by max and min. A max or min folds a run of integers by its
// extreme, from the row cache's block extremes when the row has them
// (read.SeriesIterator.BatchExtremes): the loop's rule gives the same
// value either way, -0 against 0 included. A subquery's selectors get
// the outer query's step in their hints, hence the context mark, which
// only a caller that sees the whole query can set.
// Options.DisablePushdown turns it off;
// Queryable.Stats counts the pushed-down Selects.
//
// count_over_time does not return a lone sample's value, so WithPushdown,
// given tsd's Queryable, rewrites the engine's statement before Exec:
// count_over_time(v[R]) becomes sum_over_time(v[R]) with a marker matcher
// appended to v (the engine names the function in the hints and calls it
// by name at Exec, and drops the metric name of both alike). Select
// knows the marker by its address, not its text, drops it, and reads that
// selector's series in count mode: every sample but a staleness marker
// is 1, so the engine's sum over raw samples, a pushed-down sum (a count
// of the window's samples) and a sum from rollup cells (their count
// cells) are all the count. A query that writes the marker's matcher
// itself ({__tsd_count__=""}) keeps its ordinary meaning.
//
// Given the engine's statement, WithPushdown also removes the calls it
// can: avg_over_time, min_over_time, max_over_time, sum_over_time and
// last_over_time over a selector with a metric name matcher, in an
// instant query or at a step of at least the range, are replaced by the
// selector itself, marked (a marker matcher known by its address, then
// the window's function, range and lookback). Select rebuilds the matrix
// selector's hints from the instant ones and returns the windows as
// above, named as the call names its result (without the metric name,
// but for last_over_time); the engine, reading an instant selector, takes
// the sample at each step's end. Where steps are closer than the lookback
// delta, a staleness marker ends each empty window that an earlier
// window's sample would otherwise fill, so the step gets nothing, as the
// call gave nothing for an empty window. The answer is the call's, for
// about a third less
// engine time on hourly steps (BenchmarkWindowSelector; the PromQL rollup
// figures of bench/README.md). Not under the engine's
// delayed-name-removal feature (Options.DelayedNameRemoval), which keeps
// the name until the query's end, nor inside a label_replace or
// label_join that writes the name (see Names kept by grouping).
//
// # Names kept by grouping
//
// TSBS asks VictoriaMetrics for each metric's hourly maximum as
// max(max_over_time({__name__=~"cpu_.*", hostname="h"}[1h])) by
// (__name__). Prometheus's engine refuses that query whenever two selected
// series differ only by their names: the function drops the names, the two
// become one label set, and the engine fails with "vector cannot contain
// metrics with the same labelset" (with its delayed-name-removal feature
// too, which drops them at the end of the query). NameCollision tells such
// a query apart before it runs, from the series' labels alone: an
// aggregation grouping by the name (by with __name__, without without it)
// of more than a bare selector, over a selector that selects two series,
// over the query's span, whose labels differ only in the name (and the
// metadata labels the engine drops with it). KeepGroupedNames then wraps each such aggregation's argument
// in label_replace(…, "__name__", "$1", "__name__", "(.+)"), which an
// engine with delayed name removal evaluates while the names are still
// there, and which keeps them to the end. api/promapi runs the query so
// written on such an engine when Options.NamesEngine is set: a query
// Prometheus answers gets Prometheus's answer; one it refuses gets the
// answer VictoriaMetrics gives, one series per name. The one query told
// apart wrongly is one whose colliding series have no sample the
// function sees: Prometheus would answer it without the names, tsd
// answers it with them.
//
// # Rollups
//
// A pushed-down sum_over_time, avg_over_time, min_over_time, max_over_time
// or count_over_time (rollup.go) whose range and step are whole intervals
// of a rollup table of the Reader (read.Rollups), every window (t−R, t]
// starting a cell, is answered from the longest such interval's cells:
// read.VisitCells gives each series' cells over [first window's start,
// last window's end), exact folds of its raw points (the head's hours and
// hours whose cells are not written folded raw), up to the end of the cell
// starting at the last window's end. A window is its cells [t−R, t) less
// the point at exactly t−R plus the point at t (staleness markers are in
// neither): the first points of the cells starting at t−R and at t
// (rollup.Cell.First), or, where such a cell does not know it (OpenTSDB
// columns, cells written before tsd kept it), the raw point from
// read.PointsAt. A count is the cells' counts less and plus those points,
// exact; a cell without a count reads its window raw. Sums of integers
// stay exact (the state the pushed-down loop reaches, so answers match bit
// for bit while within 2^53), sums of floats add the cells' sums with
// Kahan-Neumaier (within rounding of the raw loop); a min or max whose
// first cell's extreme equals the leaving point, a sum overflowing or NaN,
// and a cell lacking an aggregator (an OpenTSDB row with some columns
// only) read that window raw. Anything else reads raw, as does every
// Select under Options.DisableRollups. Queryable.Stats counts the Selects
// by table. TestRollupModelPromQL holds random queries to the answers with
// rollups off.
//
// # Values
//
// Samples are float64: integers convert, floats keep their bits, and the
// stored staleness marker (series.StaleNaN) is Prometheus's
// value.StaleNaN. Native histograms are not stored; iterators only return
// chunkenc.ValFloat.
//
// # Out of range
//
// tsd stores times from the Unix epoch to MaxTime (a row key's 4-byte
// base second): a Select reads [max(start, 0), min(end, MaxTime)], so a
// query before the epoch or far in the future finds nothing rather than
// failing, and the label APIs ignore times. Names must pass
// uid.RulesLossless (printable UTF-8: no newline or control character);
// an empty label value is an absent label, as in Prometheus.
//
// # Conformance
//
// The tests run Prometheus's own PromQL test files (promqltest, v0.310.0)
// against tsd's write path and this Queryable: every file passes except the
// nine that load native histograms, which run as expected failures and as
// copies in testdata/ with their histogram cases removed. No built-in file
// loads a sample outside [0, MaxTime]. A reference test compares 125
// expressions on random data with Prometheus's tsdb, within 1e-9 relative,
// each both marked by WithPushdown and not, and range-function queries at
// steps that allow pushdown and steps, functions and subqueries that must
// not. TestPushdownEdges holds pushed-down results to Prometheus's bit for
// bit on data built for their corner cases (window ends on points and
// rows, integers past 2^53, NaN, infinities, overflowing sums, staleness
// markers, late and head-only points), cold, from the row cache and
// concurrently. A pushed-down query's engine statistics (samples read,
// peak samples) would count one sample per window, not the window's
// samples, so api/promapi does not push down a query asked for them.
//
// # Parsing
//
// Parser parses a query as Prometheus's parser does (the same tree,
// positions and errors) but keeps the regex matchers it compiles, within a
// byte budget, least recently used dropped first. Prometheus compiles
// every regex of a query on every parse; TSBS's name regex over ten CPU
// metrics costs 50 µs and 30 KB each time, as much as the rest of the
// parse, and a dashboard's refresh or another host's query asks for the
// same regex again. The parser takes no cache, so Parser parses a copy of
// the query whose regex tokens are placeholders of the same length, cheap
// literals, and swaps the kept matchers in; anything it cannot vouch for
// is parsed again from the query itself. api/promapi builds each query
// from a placeholder statement and gives it the parsed tree.
//
// # Limits
//
// Each Querier (one per PromQL query) charges its series and decoded points
// to one read.Budget from Options.Limits; the first limit crossed fails the
// query with a *read.LimitError. NewEngine maps Limits.MaxPoints to the
// engine's max samples.
package promql
