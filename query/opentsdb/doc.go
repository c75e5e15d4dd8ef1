// Package opentsdb answers OpenTSDB 2.4's /api/query: Engine.Execute takes a
// parsed tsquery.TSQuery, resolves each sub-query to series through the UID
// table and the series index, reads their points with query/read (store and
// head), groups them by the group-by tag values and runs query/agg's
// downsampling, rate and group-by aggregation per group. Result.AppendJSON
// writes OpenTSDB's response body. The package knows nothing of HTTP: api
// maps its errors to status codes (see Errors).
//
// # Pipeline of one sub-query
//
//  1. Resolve: metric name to UID (unknown: 400 "No such name for
//     'metrics': 'foo'"), each filter's tag key to a UID and, for
//     literal_or, its values (unknown: 400 unless SkipUnresolvedTagVs);
//     or the tsuids, which must share one metric.
//  2. Select: index.Postings over the filters, ExplicitTags, RestrictTime
//     to the aggregation window (agg.ScanRange: the query range aligned
//     down to the downsampling interval and the hour, and up past the end).
//  3. Read: read.Reader.Fetch over the window, one budget per query: the
//     scan plan keeps the selected rows still encoded, the per-series
//     plan nothing, and a group's members are decoded only when the group
//     is aggregated (lazy.go), so an answer holds one group's raw points
//     at a time. A query with delete, showStats or showSummary reads every
//     series whole with read.Reader.Read instead (a delete must know the
//     series read; statistics time the read alone); the answers are byte
//     for byte the same (TestLazyMatchesEager). A sub-query downsampled by
//     a fixed interval or "all" (agg.PushSpec) reads through
//     read.Reader.Visit: each row's points are folded into the series'
//     agg.Buckets as the reader decodes them, on the reader's goroutines,
//     so no raw point is kept (fused.go); the answer is byte for byte the
//     raw pipeline's (TestFusedMatchesRaw).
//     A sub-query downsampled by a fixed interval that rollup cells can
//     serve (rollup.go: OpenTSDB's choice of interval and rollupUsage,
//     agg.CellsServe's downsamplers) reads through
//     read.Reader.VisitCells instead, each cell folded into its bucket
//     (agg.Buckets.PushCell): the answer is the raw one within float
//     rounding (TestRollupModel), without annotations.
//     Every read goes through one reader per sub-query (preagg.go):
//     Options.Reader, or Options.PreAgg (the pre-aggregation tables) for
//     a sub-query with preAggregate or a literal_or filter on the
//     aggregate tag key other than its raw value, as OpenTSDB 2.4 routes.
//  4. Group: series with points (or notes) in the window are grouped by the
//     UIDs of their group-by tag values, in ascending tag-key UID order;
//     groups come out sorted by those bytes, as OpenTSDB's byte-keyed map
//     does. A series lacking a group-by tag is dropped. With the none
//     aggregator every series is its own group, ordered by TSUID.
//  5. Aggregate: agg.GroupBy per group (agg.NewGroupByBuckets over a fused
//     read's buckets); output is clipped to [start, end].
//
// # Execute and Stream
//
// Execute runs a query whole into a Result, which AppendJSON writes.
// Stream answers it as it is written: Engine.Stream validates the query,
// resolves every sub-query (so a bad name is a 400 before any byte) and
// checks the output bound; each Stream.AppendJSON call then appends the
// next bytes, up to a size the caller picks, running the query one group
// at a time and dropping each group once written. Between calls a Stream
// holds the current sub-query's read state (encoded rows, or downsampling
// buckets) and one group, whatever the answer's size. Options.Timeout
// counts the time spent in calls, not the time between them (the caller
// writing to a slow client). The bytes are Execute's (TestStreamMatchesExecute).
//
// # Response (OpenTSDB's HttpJsonSerializer.formatQueryAsyncV1)
//
// A JSON array, one object per group, sub-queries in order, fields in
// this order: metric, tags (by name: each tag key whose value no two
// members disagree on, even when some members lack the key, as
// SpanGroup.computeTags keeps it), aggregateTags (tag keys where members
// differ, in tag-key UID order), query (showQuery), tsuids (showTSUIDs, sorted
// uppercase hex), annotations (unless noAnnotations, when any), globalAnnotations
// (when asked and any), dps. dps is {"<ts>":v,...}, or [[ts,v],...] with
// the arrays option; ts in seconds unless msResolution (two points in one
// second then give the same key twice, as OpenTSDB writes). An integer is
// a JSON integer; a double is written as Java's Double.toString does
// (16.0, 1.5E-4); NaN is "NaN", or null when the sub-query's fill policy
// is null; infinities are "Infinity" and "-Infinity".
//
// # Errors
//
// Execute returns a *tsquery.Error (errors.Is tsquery.ErrBadRequest) for
// anything the request got wrong: HTTP 400 with its Msg and Details. A
// *read.LimitError (errors.Is read.ErrLimit) is a crossed query limit:
// 413. An *OutputLimitError (errors.Is ErrOutputLimit and read.ErrLimit)
// is an answer over Options.MaxOutputPoints: a sub-query downsampled by a
// fixed interval with a fill policy, or by "all", answers one point per
// bucket and group, so groups (counted from the selected series) × buckets
// bounds it before anything is read, and a bound over the limit refuses
// the query; any other answer is counted as it is made and stops when it
// passes the limit (a Stream then after some of its bytes). A
// *TimeoutError (errors.Is ErrTimeout) is Options.Timeout passing: 408.
// Anything else is the store's failure. Stream's calls return the same
// errors.
//
// # Differences from OpenTSDB 2.4
//
//   - Output points count against the query's data points and bytes
//     limits too (checked every 4096), so a fill policy over a tiny
//     interval cannot make an unbounded answer.
//   - The index resolves filters by bitmaps (see uid/index): no
//     tsd.query.filter.expansion_limit applies.
//   - delete=true deletes the stored hour rows of the series read, as
//     OpenTSDB deletes the rows it scanned, and, through
//     StoreDeleter.Head, the points of exactly the query range still in
//     the write path's head (durably: the head logs the delete, so neither
//     a flush nor a restart brings them back; later writes are kept).
//   - showStats adds a per-result "stats" object and showSummary a
//     trailing {"statsSummary":{...}} element shaped as OpenTSDB 2.4's
//     (keys sorted, times as double milliseconds) holding only figures tsd
//     measures: stringToUidTime, queryScanTime, groupByTime,
//     aggregationTime, serializationTime, dpsPostFilter, emittedDPs,
//     queryIndex; the summary adds avg/max of the aggregation, scan and
//     serialization times, processingPreWriteTime and queryIdx_NN with an
//     empty scannerStats. HBase scanner figures are left out.
//   - Without a timezone in the query, absolute dates and calendar
//     downsampling use Options.Location (tsd.core.timezone), else UTC.
//
// # Histograms
//
// A sub-query with percentiles or show-histogram-buckets reads OpenTSDB
// 2.4's histogram cells (read.Reader.Histograms, decoded with
// Options.Histograms) instead of points and answers as OpenTSDB's
// TsdbQuery.runHistogramAsync does (histogram.go): per-series sums per
// downsampling bucket, bucket-wise sums across a group's series at equal
// times, one result series per percentile (<metric>_pct_<p>) and per
// bucket. Rollup tables and the fused read are never used for them.
//
// # Invariants
//
// Execute holds every point of a query in memory at most once (the read
// budget bounds it); each group's output shares one slab of points. A
// Stream holds one group's raw points and output at a time, besides the
// fetched rows or buckets of its current sub-query. An Engine is safe for
// concurrent use; a Result or a Stream is not, and neither must be used
// after Release or Close.
package opentsdb
