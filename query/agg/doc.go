// Package agg is the pure, storage-free arithmetic of OpenTSDB 2.4 queries:
// the named aggregators, downsampling, rate conversion and the group-by
// merge with interpolation. It imports only series and the standard
// library, so the query engine and rollup workers share one implementation.
//
// # Pipeline
//
// Each input series runs through, in this order (OpenTSDB's
// AggregationIterator.create): downsampling (Downsampler or
// FillingDownsampler), then rate (RateSpan), then all series of a group are
// merged by GroupBy, which interpolates the series that have no point at a
// timestamp and applies the group aggregator. Output is clipped to the query
// range, as OpenTSDB's serializer does.
//
// # Value types
//
// A point is an int64 or a float64. The group-by runs on int64 ("long path")
// only when every value it can see is an integer and no rate is computed;
// one float anywhere in the window switches it to the float64 path. Integer
// arithmetic wraps like Java's long (avg and the linear interpolation divide
// truncating toward zero); float64 results convert to int64 as Java's (long)
// cast does (NaN to 0, saturating). Downsampled and rate values are always
// float64: OpenTSDB's Downsampler runs runDouble on every bucket, so a
// downsampled avg of integers may be 1.5.
//
// # Replicated quirks (OpenTSDB 2.4 behaviour kept on purpose)
//
//   - dev is Welford's algorithm divided by the value count: the code's
//     "n-1" counts from two, so the result is the population standard
//     deviation (values 1 and 3 give 1, not 1.414). One value gives 0.
//   - ep*r3 and ep*r7 honour the estimator on the integer path only;
//     the float path always uses commons-math's LEGACY estimator.
//   - With rate, each series' first value is the rate from (t=0, v=0) to its
//     first point; it is never emitted but stands in as the "previous rate"
//     for the other series of the group until the series' second point, and
//     rates are never interpolated (the previous rate is used).
//   - A series whose first point (after downsampling) falls before the
//     aggregation window's start is dropped from the group entirely.
//   - mimmax fills with -MaxFloat64 on the float path (the docs say
//     MinFloat64); mimmin with MaxFloat64; the integer path uses MinInt64 and
//     MaxInt64.
//   - Calendar weeks start on Sunday (Java's en_US first day of week).
//
// # Choices where OpenTSDB is silent or fails
//
//   - diff is last minus first; squareSum is the sum of squares, skipping NaN
//     on the float path (all NaN gives NaN). Neither code was available to
//     read; both follow OpenTSDB's documented definitions.
//   - The scalar fill policy fills with Downsample.FillValue (OpenTSDB 2.4
//     throws "unhandled fill policy" on the query path).
//   - An infinite aggregate is returned as is (OpenTSDB throws).
//
// # Invariants
//
// Inputs are series.Iterators in ascending time order with one point per
// timestamp. GroupBy holds two points and one accumulator per series; only
// median and percentile accumulators keep a bucket's values. Nothing here
// allocates per point once buffers have grown.
package agg
