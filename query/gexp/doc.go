// Package gexp answers OpenTSDB 2.4's /api/query/gexp: Graphite-style
// functions over /api/query sub-queries, given as exp= parameters of a GET.
//
// # Grammar
//
//	expression := NAME "(" param ("," param)* ")"
//	param      := expression | metric | NAME
//	metric     := NAME ":" [NAME ":"] [NAME ":"] NAME ["{" NAME "=" NAME ("," NAME "=" NAME)* "}"]
//	NAME       := "*" | [a-zA-Z0-9-_#/$@|.'\[\]]+
//
// Blanks between tokens are skipped and anything after the outer
// expression's closing parenthesis is ignored, as OpenTSDB's generated
// parser does. A metric parameter is an m= sub-query in its compact form;
// a bare NAME is an argument of the function (a factor, an alias, a
// window). The function is looked up while parsing: an unknown name fails
// the request with "Function X has not been implemented".
//
// # Evaluation
//
// Every metric parameter of every expression is appended, in reading
// order, to the request's m= sub-queries, and the whole query runs on
// opentsdb.Engine; sub-queries equal to an earlier one are dropped, as
// /api/query does. A metric parameter then reads the result of the
// sub-query whose position in the deduplicated list equals the
// parameter's position among the expressions' metrics alone: OpenTSDB's
// indexing, which reads another sub-query's result when m= sub-queries
// come first or a duplicate was dropped, and fails with "Index: i, Size:
// n" when it points past the end. The answer holds only the expressions'
// series, expressions in order, in /api/query's shape.
//
// Functions (each as OpenTSDB 2.4.1's class of the same name in
// net.opentsdb.query.expression):
//
//   - scale(series..., factor): factor matches ^[-0-9.]+$; an integer
//     point times an integral factor stays an integer (wrapping), others
//     become doubles.
//
//   - absolute(series...): the absolute value of every point.
//
//   - alias(series..., name...): the names joined by "," become the metric
//     name, "@tagk" replaced by the series' value of tagk when it has
//     tags; tags and aggregateTags are emptied; every point also becomes
//     its absolute value (OpenTSDB's Alias does so).
//
//   - timeShift(series, 'Nunit') (also shift): OpenTSDB 2.4.1 parses the
//     unit with the closing quote still on it, so every shift it is given
//     fails, after the sub-queries ran, with "unknown time unit=min'" (or
//     "Invalid Parameter", "Invalid timeshift parameter: eg '10min'").
//
//   - highestMax(series..., n) and highestCurrent(series..., n): the n
//     series ranked highest, stable on ties. Both replay
//     AggregationIterator (LERP) over the series, whose aggregator gets at
//     each timestamp the values of the series active there packed to the
//     front, so position i is not series i once a series has not started
//     or has ended (zeros fill the tail). highestMax keeps each
//     position's maximum from Double.MIN_VALUE (a tiny positive number,
//     above every negative value) and Long.MIN_VALUE; highestCurrent
//     drops series without points and, as its latest_ts never moves,
//     ranks by the arrays of the last timestamp of each path (integer or
//     double). With both paths seen, a position ranks by the larger of
//     its two figures.
//
//   - movingAverage(series..., window): every point becomes a double; a
//     count window answers 0 until it holds that many points (NaN points
//     not counted), then their mean; a quoted time window ('5min', units
//     d/day, h/hr/hour, m/min, s/sec) answers 0 for the first point, then
//     the mean of the newest points until the gaps between them add up to
//     the window, 0 while they do not yet.
//
//   - sumSeries, diffSeries, multiplySeries, divideSeries (also sum,
//     difference, multiply, divide): 2 to 26 series parameters ("Must
//     have 2 to 26 series, got N instead"; none answers nothing), bound
//     to a, b, c... of the expression "a op b op ..." (left to right) and
//     joined as OpenTSDB's UnionIterator joins them: series pair by their
//     tags, answers in the byte order of their tag UIDs (tagless first);
//     points pair by position, not by time, the k-th answer point at the
//     smallest timestamp of the members' k-th points; a parameter without
//     a series of those tags, or a NaN, counts 0; members holding
//     different numbers of points fail with "No more elements"; every
//     point is a double and a division by zero gives 0 (JEXL's lenient
//     arithmetic). An answer has the first parameter's tags (none if it
//     has no member), the metric of the member with the smallest metric
//     UID, the union of the members' aggregated tags and no TSUIDs. A
//     member renamed by alias has no metric UID in OpenTSDB, which then
//     fails with "Wrong id.length = 0 ..."; tsd gives the same answer for
//     any member whose metric name is not a metric, and, as alias empties
//     the tags in tsd, pairs an aliased member as tagless (OpenTSDB pairs
//     it by its original tags). A series without points is left out
//     (OpenTSDB fails with a NullPointerException).
//
// # Errors
//
// Every refusal is a *tsquery.Error (400). OpenTSDB answers a parse error
// or a function's refusal with 500; tsd keeps its message.
package gexp
