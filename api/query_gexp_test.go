package api

import (
	"net/url"
	"strings"
	"testing"
)

// TestQueryGexp: Graphite-style expressions over points put through
// /api/put, each answer worked out from OpenTSDB 2.4.1's classes in
// src/query/expression (cited per case), through the real HTTP server.
func TestQueryGexp(t *testing.T) {
	put := `[{"metric":"g.m","timestamp":1700000000,"value":5,"tags":{"host":"h1"}},` +
		`{"metric":"g.m","timestamp":1700000060,"value":-6,"tags":{"host":"h1"}},` +
		`{"metric":"g.m","timestamp":1700000000,"value":-1.5,"tags":{"host":"h2"}},` +
		`{"metric":"g.m","timestamp":1700000060,"value":2.25,"tags":{"host":"h2"}},` +
		`{"metric":"g.n","timestamp":1700000000,"value":-3,"tags":{"host":"h1"}},` +
		`{"metric":"h.m","timestamp":1700000060,"value":10,"tags":{"host":"a"}},` +
		`{"metric":"h.m","timestamp":1700000000,"value":3,"tags":{"host":"b"}},` +
		`{"metric":"h.m","timestamp":1700000060,"value":2,"tags":{"host":"b"}},` +
		`{"metric":"h.m","timestamp":1700000000,"value":4,"tags":{"host":"c"}},` +
		`{"metric":"h.m","timestamp":1700000060,"value":1,"tags":{"host":"c"}},` +
		`{"metric":"h.c","timestamp":1700000000,"value":-1.5,"tags":{"host":"a"}},` +
		`{"metric":"h.c","timestamp":1700000060,"value":-2.5,"tags":{"host":"a"}},` +
		`{"metric":"h.c","timestamp":1700000000,"value":-0.5,"tags":{"host":"b"}},` +
		`{"metric":"mv","timestamp":1700000000,"value":2},{"metric":"mv","timestamp":1700000060,"value":4},` +
		`{"metric":"mv","timestamp":1700000120,"value":9}]`
	base := startExpServer(t, put)
	const (
		h1 = `{"metric":"g.m","tags":{"host":"h1"},"aggregateTags":[],"dps":`
		h2 = `{"metric":"g.m","tags":{"host":"h2"},"aggregateTags":[],"dps":`
		t0 = `"1700000000":`
		t1 = `"1700000060":`
	)
	checkGexp(t, base, []gexpCase{
		// Scale.java: an integer point times an integral factor stays a
		// long; a double point becomes factor * value.
		{"scale int", "exp=scale(sum:g.m{host=*},2)", 200,
			`[` + h1 + `{` + t0 + `10,` + t1 + `-12}},` + h2 + `{` + t0 + `-3.0,` + t1 + `4.5}}]`},
		// Scale.java: a fractional factor makes every point a double.
		{"scale fraction", "exp=scale(sum:g.m{host=h1},0.5)", 200,
			`[` + h1 + `{` + t0 + `2.5,` + t1 + `-3.0}}]`},
		// Absolute.java: Math.abs on the point's own type.
		{"absolute", "exp=absolute(sum:g.m{host=*})", 200,
			`[` + h1 + `{` + t0 + `5,` + t1 + `6}},` + h2 + `{` + t0 + `1.5,` + t1 + `2.25}}]`},
		// Nested: ExpressionTree.evaluate materialises the sub-expression.
		{"nested", "exp=scale(absolute(sum:g.m{host=*}),2)", 200,
			`[` + h1 + `{` + t0 + `10,` + t1 + `12}},` + h2 + `{` + t0 + `3.0,` + t1 + `4.5}}]`},
		// HighestMax.java: AggregationIterator (LERP) hands MaxCacheAggregator
		// the values of the series active at each time, packed to the
		// front: at 1700000000 a has not started, so b's 3 and c's 4 land
		// at positions 0 and 1, then 10, 2, 1 at 1700000060; maxima 10, 4,
		// 1 rank a, b (c's 4 counted for b).
		{"highestMax misaligned", "exp=highestMax(sum:h.m{host=*},2)", 200,
			`[{"metric":"h.m","tags":{"host":"a"},"aggregateTags":[],"dps":{` + t1 + `10}},` +
				`{"metric":"h.m","tags":{"host":"b"},"aggregateTags":[],"dps":{` + t0 + `3,` + t1 + `2}}]`},
		// HighestMax.java: maxima start at Double.MIN_VALUE, above every
		// negative value, so a and b tie and the stable sort keeps a.
		{"highestMax negative", "exp=highestMax(sum:h.c{host=*},1)", 200,
			`[{"metric":"h.c","tags":{"host":"a"},"aggregateTags":[],"dps":{` + t0 + `-1.5,` + t1 + `-2.5}}]`},
		// HighestCurrent.java: latest_ts never moves, so the last time's
		// array ranks: at 1700000060 only a is active ([-2.5, 0]): b wins.
		{"highestCurrent", "exp=highestCurrent(sum:h.c{host=*},1)", 200,
			`[{"metric":"h.c","tags":{"host":"b"},"aggregateTags":[],"dps":{` + t0 + `-0.5}}]`},
		{"highestCurrent ints", "exp=highestCurrent(sum:h.m{host=*},3)", 200,
			`[{"metric":"h.m","tags":{"host":"a"},"aggregateTags":[],"dps":{` + t1 + `10}},` +
				`{"metric":"h.m","tags":{"host":"b"},"aggregateTags":[],"dps":{` + t0 + `3,` + t1 + `2}},` +
				`{"metric":"h.m","tags":{"host":"c"},"aggregateTags":[],"dps":{` + t0 + `4,` + t1 + `1}}]`},
		{"highest bad n", "exp=highestMax(sum:h.m,x)", 400, `"message":"Unparseable top n value: x"`},
		{"highest zero", "exp=highestCurrent(sum:h.m,0)", 400, `"message":"Top n value must be greater than zero: 0"`},
		{"highest no n", "exp=highestMax(sum:h.m)", 400, `"message":"Need aggregation window for moving average"`},
		// MovingAverage.java: a count window answers 0 until it holds n
		// points (condition_met), then their mean, as doubles.
		{"movingAverage count", "exp=movingAverage(sum:mv,2)", 200,
			`[{"metric":"mv","tags":{},"aggregateTags":[],"dps":{` + t0 + `0.0,` + t1 + `3.0,"1700000120":6.5}}]`},
		// MovingAverage.java: a time window answers 0 for the first point
		// (window_started), then the mean of the points until the gaps
		// add up to the window: 0 at 60s (120s not reached), then 9 and 4.
		{"movingAverage time", "exp=movingAverage(sum:mv,'2min')", 200,
			`[{"metric":"mv","tags":{},"aggregateTags":[],"dps":{` + t0 + `0.0,` + t1 + `0.0,"1700000120":6.5}}]`},
		{"movingAverage unit", "exp=movingAverage(sum:mv,'2week')", 400, `"message":"Unknown time unit=week in window='2week'"`},
		{"movingAverage zero", "exp=movingAverage(sum:mv,0)", 400, `"message":"Moving average window must be an integer greater than zero"`},
		{"movingAverage bad", "exp=movingAverage(sum:mv,x)", 400, `"message":"Unparseable window size: x"`},
		{"movingAverage none", "exp=movingAverage(sum:mv)", 400, `"message":"Missing moving average window size"`},
		// Alias.java + PostAggregatedDataPoints.java: the template names
		// the series (@host filled from its tags), tags and aggregateTags
		// empty, and Alias takes the absolute value of every point.
		{"alias", "exp=alias(sum:g.m{host=*},srv-@host)", 200,
			`[{"metric":"srv-h1","tags":{},"aggregateTags":[],"dps":{` + t0 + `5,` + t1 + `6}},` +
				`{"metric":"srv-h2","tags":{},"aggregateTags":[],"dps":{` + t0 + `1.5,` + t1 + `2.25}}]`},
		// QueryRpc.parseQuery: m= sub-queries come before the expressions'
		// metrics, but ExpressionTree reads query_results at the metric's
		// index among the expressions' metrics: this absolute reads g.n.
		{"m= shifts the index", "m=sum:g.n&exp=absolute(sum:g.m)", 200,
			`[{"metric":"g.n","tags":{"host":"h1"},"aggregateTags":[],"dps":{` + t0 + `3}}]`},
		// QueryRpc.parseQuery drops the duplicate sub-query, so the second
		// expression's metric index 1 is past the one result.
		{"duplicate dropped", "exp=absolute(sum:g.m)&exp=absolute(sum:g.m)", 400, `"message":"Index: 1, Size: 1"`},
		// TimeShift.parseParam keeps the closing quote on the unit.
		{"timeShift", "exp=timeShift(sum:g.m,'1min')", 400, `"message":"unknown time unit=min'"`},
		{"timeShift unquoted", "exp=shift(sum:g.m,1min)", 400, `"message":"Invalid timeshift parameter: eg '10min'"`},
		{"timeShift no digits", "exp=timeShift(sum:g.m,'min')", 400, `"message":"Invalid Parameter: 'min'"`},
		// Scale.java's refusals.
		{"scale bad factor", "exp=scale(sum:g.m,x2)", 400, `"message":"Unparseable scale factor value: 0.0"`},
		{"scale two dots", "exp=scale(sum:g.m,1.2.3)", 400, `"message":"Invalid parameter, must be an integer or floating point"`},
		{"scale no factor", "exp=scale(sum:g.m)", 400, `"message":"Missing scaling factor"`},
		// Alias.java: no template.
		{"alias no name", "exp=alias(sum:g.m)", 400, `"message":"Missing the alias"`},
		// ExpressionFactory.getByName.
		{"unknown", "exp=nope(sum:g.m)", 400, `"message":"Function nope has not been implemented"`},
		{"2.5 only", "exp=firstDifference(sum:g.m)", 400, `"message":"Function firstDifference has not been implemented"`},
		// Expressions.parseExpressions wraps the parser's failure.
		{"parse", "exp=scale(sum:g.m", 400, `"message":"Failed to parse scale(sum:g.m"`},
		// ExpressionTree.evaluate finds no series parameter at position 0.
		{"argument first", "exp=scale(2,sum:g.m)", 400, `"message":"Unknown parameter type: null in tree: scale"`},
		// QueryRpc.parseQuery: start is required; a missing metric is 400.
		{"no start", "exp=absolute(sum:g.m)&start=", 400, `"message":"Missing parameter <code>start</code>"`},
		{"no such metric", "exp=absolute(sum:nope)", 400, `"message":"No such name for 'metrics': 'nope'"`},
	})
	if code, _, body := do(t, "POST", base+"/api/query/gexp", `{"start":"1h-ago","queries":[]}`); code != 400 ||
		!strings.Contains(body, "exp parameters of a GET") {
		t.Errorf("POST: %d %s", code, body)
	}
}

// gexpCase is a GET /api/query/gexp over [1699999000, 1700001000] and
// its answer: the whole body for a 200, else a part of it.
type gexpCase struct {
	name, query string
	code        int
	want        string
}

// checkGexp runs each case against the server at base.
func checkGexp(t *testing.T, base string, cases []gexpCase) {
	t.Helper()
	for _, tc := range cases {
		q := "start=1699999000&end=1700001000&" + escapeExp(tc.query)
		code, _, body := do(t, "GET", base+"/api/query/gexp?"+q, "")
		if code != tc.code || (code == 200 && body != tc.want) || (code != 200 && !strings.Contains(body, tc.want)) {
			t.Errorf("%s: GET ?%s: %d %s\nwant %d %s", tc.name, q, code, body, tc.code, tc.want)
		}
	}
}

// escapeExp escapes each exp= value of a query string.
func escapeExp(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, "exp="); ok {
			parts[i] = "exp=" + url.QueryEscape(v)
		}
	}
	return strings.Join(parts, "&")
}

// TestQueryGexpSetFunctions: sumSeries, diffSeries, multiplySeries and
// divideSeries (and their short names) over the real engine, answers
// worked out from OpenTSDB 2.4.1's SumSeries.java and siblings: a UNION
// of the parameters by tags in tag UID order, points paired by position
// at the smaller timestamp, a missing member counting 0, x/0 giving 0,
// every point a double, the answer named after the smallest metric UID
// with the first parameter's tags. Separate puts fix the UIDs: s.b and
// z1 before s.a and z2.
func TestQueryGexpSetFunctions(t *testing.T) {
	base := startExpServer(t,
		`[{"metric":"s.b","timestamp":1700000000,"value":1,"tags":{"host":"z1"}},`+
			`{"metric":"s.b","timestamp":1700000060,"value":2,"tags":{"host":"z1"}}]`,
		`[{"metric":"s.a","timestamp":1700000000,"value":10,"tags":{"host":"z1"}},`+
			`{"metric":"s.a","timestamp":1700000060,"value":20,"tags":{"host":"z1"}}]`,
		`[{"metric":"s.a","timestamp":1700000000,"value":3,"tags":{"host":"z2"}},`+
			`{"metric":"s.a","timestamp":1700000060,"value":4,"tags":{"host":"z2"}},`+
			`{"metric":"s.c","timestamp":1700000000,"value":5,"tags":{"host":"z1"}}]`,
	)
	const (
		t0 = `"1700000000":`
		t1 = `"1700000060":`
	)
	z := func(metric, tags, v0, v1 string) string {
		return `{"metric":"` + metric + `","tags":{` + tags + `},"aggregateTags":[],"dps":{` + t0 + v0 + `,` + t1 + v1 + `}}`
	}
	checkGexp(t, base, []gexpCase{
		// z1 pairs s.a with s.b and takes s.b's name (UID smaller); z2 has
		// only s.a.
		{"sum", "exp=sumSeries(sum:s.a{host=*},sum:s.b{host=*})", 200,
			`[` + z("s.b", `"host":"z1"`, "11.0", "22.0") + `,` + z("s.a", `"host":"z2"`, "3.0", "4.0") + `]`},
		{"sum short", "exp=sum(sum:s.a{host=*},sum:s.b{host=*})", 200,
			`[` + z("s.b", `"host":"z1"`, "11.0", "22.0") + `,` + z("s.a", `"host":"z2"`, "3.0", "4.0") + `]`},
		// The first parameter has no z2: that answer has no tags.
		{"diff", "exp=diffSeries(sum:s.b{host=*},sum:s.a{host=*})", 200,
			`[` + z("s.b", `"host":"z1"`, "-9.0", "-18.0") + `,` + z("s.a", ``, "-3.0", "-4.0") + `]`},
		{"difference", "exp=difference(sum:s.b{host=*},sum:s.a{host=*})", 200,
			`[` + z("s.b", `"host":"z1"`, "-9.0", "-18.0") + `,` + z("s.a", ``, "-3.0", "-4.0") + `]`},
		{"multiply", "exp=multiplySeries(sum:s.a{host=*},sum:s.b{host=*})", 200,
			`[` + z("s.b", `"host":"z1"`, "10.0", "40.0") + `,` + z("s.a", `"host":"z2"`, "0.0", "0.0") + `]`},
		// JEXL's lenient division answers x/0 with 0.
		{"divide", "exp=divideSeries(sum:s.a{host=*},sum:s.b{host=*})", 200,
			`[` + z("s.b", `"host":"z1"`, "10.0", "10.0") + `,` + z("s.a", `"host":"z2"`, "0.0", "0.0") + `]`},
		{"divide three", "exp=divide(sum:s.a{host=*},sum:s.b{host=*},scale(sum:s.b{host=z1},2))", 200,
			`[` + z("s.b", `"host":"z1"`, "5.0", "2.5") + `,` + z("s.a", `"host":"z2"`, "0.0", "0.0") + `]`},
		// Nesting: a set function reads another function's answer, and
		// another function reads a set function's.
		{"nested in", "exp=sumSeries(scale(sum:s.b{host=*},2),sum:s.a{host=z1})", 200,
			`[` + z("s.b", `"host":"z1"`, "12.0", "24.0") + `]`},
		{"nested out", "exp=scale(multiply(sum:s.a{host=z1},sum:s.b),0.5)", 200,
			`[` + z("s.b", `"host":"z1"`, "5.0", "20.0") + `]`},
		{"one series", "exp=multiplySeries(sum:s.a{host=*})", 400, `"message":"Must have 2 to 26 series, got 1 instead"`},
		// s.c holds one point at z1, s.a two: TimeSyncedIterator.next(int)
		// runs out on the shorter.
		{"different lengths", "exp=sumSeries(sum:s.c{host=*},sum:s.a{host=*})", 400, `"message":"No more elements"`},
		// An aliased member has no metric UID (PostAggregatedDataPoints).
		{"alias member", "exp=sumSeries(alias(sum:s.a,x),sum:s.b)", 400, `"message":"Wrong id.length = 0 which is != 3 required for 'metrics'"`},
	})
}
