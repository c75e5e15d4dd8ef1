// Package expr answers OpenTSDB 2.3's expression query, /api/query/exp.
// The body names metrics (each with an id, an optional filter set id, an
// aggregator, a fill policy and a time offset), filter sets, arithmetic
// expressions over metric and expression ids, and the outputs to return;
// "time" holds the range, the common aggregator, downsampler and rate.
//
// # Evaluation
//
// Every metric becomes a sub-query of one /api/query run on opentsdb.Engine
// (one run per distinct timeOffset, its range shifted back and its points
// shifted forward), so grouping, downsampling, rate and the limits are
// exactly /api/query's. Each result group is a set: metric name, common
// tags, aggregated tag keys and its points as doubles. An expression
// (numbers, ids, + - * / %, unary minus, parentheses) pairs the sets of
// its variables by join key, the set's tags ("k=v" pairs, plus the
// aggregated tag keys with includeAggTags): union (the default) keeps
// every key, a variable lacking one taking its fill value throughout;
// intersection keeps keys every variable has. A variable whose one set
// has an empty join key (a total over every series) pairs with every key. Within a pairing the expression is computed
// at the union of the members' timestamps; a member without a point there
// takes its fill value: the metric's fillPolicy, else the expression's,
// else NaN (zero is 0, scalar its value, none, nan and null NaN).
//
// # Answer
//
//	{"outputs":[{"id","alias","dps":[[ts,v1,v2,...],...],
//	  "dpsMeta":{"firstTimestamp","lastTimestamp","setCount","series"},
//	  "meta":[{"index":0,"metrics":["timestamp"]},
//	          {"index":1,"metrics":[...],"commonTags":{...},"aggregatedTags":[...]},...]}],
//	 "query":<the request>}
//
// Outputs default to every expression, or every metric when there are no
// expressions. Rows are the union of the output's series' timestamps (ms)
// in the range; values are doubles as Java writes them, a missing one
// "NaN". meta is left out when an output has no series, as OpenTSDB does.
//
// # Differences from OpenTSDB, on purpose
//
//   - lastTimestamp is the last row's time (OpenTSDB's stays 0 for a
//     single row); "query" echoes the request body as sent.
//   - Expressions are plain arithmetic, not JEXL: no functions or
//     comparisons.
//   - Every refusal is a 400 *tsquery.Error, never a 500.
package expr
