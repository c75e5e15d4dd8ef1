// Package promapi serves the Prometheus HTTP API (the read side of
// Prometheus's web/api/v1) on tsd's port, with fasthttp handlers that
// package api routes: /api/v1/query, query_range, series, labels,
// label/<name>/values, metadata, rules, query_exemplars, format_query and
// status/buildinfo, flags, runtimeinfo and tsdb, also under
// /prometheus/api/v1/.
//
// The status pages: flags lists the Prometheus flags tsd has a setting
// for (enable-feature, query.lookback-delta, query.max-samples,
// query.timeout, storage.tsdb.retention.time); runtimeinfo has
// Prometheus's fields, with reloadConfigSuccess true, lastConfigTime the
// start and corruptionCount 0; tsdb's headStats.numSeries is the series
// with points in tsd's head, seriesCountByMetricName the metrics with the
// most series in the series index, and the figures tsd does not keep
// (numLabelPairs, chunkCount, minTime, maxTime, the other lists) are 0 or
// empty.
//
// Queries run on Prometheus's own promql.Engine over the
// storage.Queryable in Options (tsd's, from query/promql, in the daemon),
// each query's Exec context marked by query/promql.WithPushdown so that
// tsd's Queryable may evaluate range functions while reading.
// tsd stores no exemplars, metadata or rules, so those endpoints answer
// valid empty documents.
//
// # Requests
//
// Every endpoint takes GET, HEAD and POST; parameters come from the URL
// and from an application/x-www-form-urlencoded body, the body's value
// first, or a multipart/form-data body, the URL's value first (net/http's
// FormValue order). Times are Unix seconds as a decimal
// float (rounded to the millisecond) or RFC 3339; durations are seconds as
// a float or Prometheus durations ("1m30s"). A range query may have at
// most MaxPointsPerSeries (11,000) steps per series. query and
// query_range take stats (any value adds the engine's statistics as
// data.stats), lookback_delta, timeout and limit. OPTIONS is answered 204,
// and every answer carries Prometheus's CORS headers for its default
// origin pattern (any origin).
//
// # Responses
//
// The bytes are Prometheus v0.310.0's (web/api/v1/json_codec.go,
// util/jsonutil). Success is {"status":"success","data":...} with optional
// "warnings" and "infos" arrays. Query data is {"resultType":T,"result":R};
// every vector or matrix sample is [<seconds>,"<value>"], seconds written
// with three decimals when not whole and the value as a string in 'e'
// form below 1e-6 and from 1e21 up ("NaN", "+Inf" and "-Inf" included); a
// scalar is [<shortest seconds>,"<value in 'f' form>"]. Plain strings are
// HTML-escaped (\u003c), label maps are not. A query_exemplars query
// without selectors is 204 with no body. Failure is
// {"status":"error","errorType":E,"error":M}, never with warnings, with
// Prometheus's status for E: bad_data 400 (any unparsable parameter or
// query), execution 422, canceled 499, timeout 503, internal 500 (storage
// failures, and a panic below the API, which Handler recovers and logs);
// a method other than GET, HEAD, POST or OPTIONS is bad_data with 405.
//
// # Slots and long answers
//
// With Options.Limiter, query, query_range, series, labels and label
// values take a query slot after their parameters parse (shared with
// OpenTSDB's queries) and wait for one at most Options.Timeout; a full
// queue or a wait run out is errorType "unavailable", answered 503 with
// Retry-After. The engine's result, already bounded by MaxSamples, is
// encoded by package api/answer: whole within 64 KiB (and compressed by
// the handler from 1400 bytes, package api's doc: Compression), else in
// parts of about 64 KiB, never splitting a sample, gzipped as a stream
// for a client that accepts gzip, each part under the slot and the slot
// given back while it is written.
//
// Handlers copy what they keep from the fasthttp.RequestCtx; a query's
// result is encoded before the query is closed, which recycles its
// slices (a streamed answer closes it once written).
//
// # Answer cache
//
// With Options.Cache (cache.go), whole answers of range queries of at
// least CacheOptions.MinSteps steps per series are kept, keyed by every
// parameter that shapes them, and given again, without a query slot,
// while internal/changes has marked nothing in the span the query's
// selectors read (promql.FindMinMaxTime, taken on the statement before
// query/promql.WithPushdown rewrites it) since the query began, and while
// no retention rule can have hidden the oldest of them. A kept answer
// of answer.MinGzip bytes or more goes gzipped to a client that takes
// gzip, from a gzipped body made at the first such hit and kept with it
// (in the cache's bytes): a dashboard's answer of 64 KB cost 0.4 ms of
// the daemon's CPU at each hit to gzip, 0.1 ms with the copy kept.
package promapi
