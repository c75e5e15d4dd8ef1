package tsquery

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// The first body is the old Grafana frontend's (built in the browser):
// ms start, no end, tags map, showQuery.
func TestParsePOSTGrafana(t *testing.T) {
	q, err := ParsePOST([]byte(`{"start":1700000000000,"queries":[{"metric":"sys.cpu.user","aggregator":"avg",
		"downsample":"1m-avg","tags":{"host":"web01|web02","dc":"*"}}],"msResolution":false,
		"globalAnnotations":true,"showQuery":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &TSQuery{Start: "1700000000000", GlobalAnnotations: true, ShowQuery: true, Queries: []*SubQuery{{
		Aggregator: "avg", Metric: "sys.cpu.user", Downsample: "1m-avg", UseFuzzyFilter: true, UseMultiGets: true,
		Filters: []Filter{{Type: Wildcard, Tagk: "dc", Filter: "*", GroupBy: true}, lit("host", "web01|web02", true)}}}}
	if !reflect.DeepEqual(q, want) {
		t.Errorf("got  %+v %+v\nwant %+v %+v", q, q.Queries[0], want, want.Queries[0])
	}

	// The newer backend: seconds, filters, rate options.
	q, err = ParsePOST([]byte(`{"start":1700000000,"end":1700003600,"queries":[{"aggregator":"sum","metric":"m",
		"filters":[{"type":"literal_or","tagk":"host","filter":"web01|web02","groupBy":true},
		{"type":"iwildcard","tagk":"dc","filter":"LGA*","group_by":true},{"type":"not_key","tagk":"env"}],
		"rate":true,"rateOptions":{"counter":true,"dropResets":true}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	sq := q.Queries[0]
	if q.Start != "1700000000" || q.End != "1700003600" || !sq.Rate ||
		*sq.RateOptions != (RateOptions{Counter: true, CounterMax: math.MaxInt64, DropResets: true}) ||
		!reflect.DeepEqual(sq.Filters, []Filter{lit("host", "web01|web02", true),
			{Type: IWildcard, Tagk: "dc", Filter: "LGA*", GroupBy: true}, {Type: NotKey, Tagk: "env"}}) {
		t.Errorf("got %+v %+v %+v", q, sq, sq.RateOptions)
	}
}

func TestParsePOSTCoercion(t *testing.T) {
	q, err := ParsePOST([]byte(`{"start":"1h-ago","end":null,"ms":"true","showTSUIDs":1,"noAnnotations":"false",
		"useCalendar":true,"timezone":"UTC","options":{"x":["a",1]},"queries":[{"aggregator":"sum","metric":"m",
		"rate":"true","rateOptions":{"counter":"true","counterMax":"65535","resetValue":100.7},
		"percentiles":[99.9,"50"],"rollupUsage":" rollup_fallback_raw ","preAggregate":1,
		"useFuzzyFilter":false,"tsuids":["0001",2],"tags":{"host":1}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	sq := q.Queries[0]
	if q.Start != "1h-ago" || q.End != "" || !q.MsResolution || !q.ShowTSUIDs || q.NoAnnotations || !q.UseCalendar ||
		q.Timezone != "UTC" || !reflect.DeepEqual(q.Options, map[string][]string{"x": {"a", "1"}}) {
		t.Errorf("query %+v", q)
	}
	if !sq.Rate || *sq.RateOptions != (RateOptions{Counter: true, CounterMax: 65535, ResetValue: 100}) ||
		!reflect.DeepEqual(sq.Percentiles, []float32{50, 99.9}) || sq.RollupUsage != RollupFallbackRaw ||
		!sq.PreAggregate || sq.UseFuzzyFilter || !sq.UseMultiGets || !reflect.DeepEqual(sq.TSUIDs, []string{"0001", "2"}) ||
		!reflect.DeepEqual(sq.Filters, []Filter{lit("host", "1", true)}) {
		t.Errorf("sub-query %+v %+v", sq, sq.RateOptions)
	}
}

// OpenTSDB applies "tags" and "filters" through setters in body order; the
// later one replaces the other.
func TestParsePOSTTagsAndFiltersOrder(t *testing.T) {
	f := `"filters":[{"type":"literal_or","tagk":"a","filter":"1"}]`
	tags := `"tags":{"b":"2"}`
	for body, want := range map[string][]Filter{
		`{"start":1,"queries":[{"aggregator":"sum","metric":"m",` + f + `,` + tags + `}]}`: {lit("b", "2", true)},
		`{"start":1,"queries":[{"aggregator":"sum","metric":"m",` + tags + `,` + f + `}]}`: {lit("a", "1", false)},
	} {
		q, err := ParsePOST([]byte(body))
		if err != nil || !reflect.DeepEqual(q.Queries[0].Filters, want) {
			t.Errorf("%s: %+v %v", body, q, err)
		}
	}
}

func TestParsePOSTDedupe(t *testing.T) {
	q, err := ParsePOST([]byte(`{"start":1,"queries":[
		{"aggregator":"sum","metric":"m","tags":{"host":"a|b"}},
		{"aggregator":"sum","metric":"n"},
		{"aggregator":"sum","metric":"m","filters":[{"type":"literal_or","tagk":"host","filter":"b|a","groupBy":true}],"index":7,"rollupUsage":"ROLLUP_RAW"},
		{"aggregator":"sum","metric":"m","tags":{"host":"a|b"},"rate":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sq := range q.Queries {
		got = append(got, sq.MString())
	}
	if !reflect.DeepEqual(got, []string{"sum:m{host=literal_or(a|b)}", "sum:n", "sum:rate:m{host=literal_or(a|b)}"}) {
		t.Errorf("after dedupe: %q", got)
	}
}

func TestParsePOSTErrors(t *testing.T) {
	for body, want := range map[string]Error{
		"":             {Msg: "Missing message content", Details: "Supply valid JSON formatted data in the body of your request"},
		"  \n":         {Msg: "Missing message content", Details: "Supply valid JSON formatted data in the body of your request"},
		"{":            {Msg: "Unable to parse the given JSON", Details: "unexpected end of JSON input"},
		"[]":           {Msg: "Unable to parse the given JSON", Details: "json: cannot unmarshal array into Go value of type tsquery.wireQuery"},
		`{"start":{}}`: {Msg: "Unable to parse the given JSON", Details: "unexpected JSON type"},
		`{"start":1,"queries":[{"filters":[{"type":"bogus","tagk":"h","filter":"x"}]}]}`: {
			Msg: "Unable to parse the given JSON", Details: "Could not find a tag value filter of the type: bogus"},
		`{"start":1,"queries":[{"filters":[{"type":"literal_or","filter":"x"}]}]}`: {
			Msg: "Unable to parse the given JSON", Details: "The tagk cannot be null or empty"},
		`{"start":1,"queries":[{"tags":{"h":"wildcard(x)"}}]}`: {
			Msg: "Unable to parse the given JSON", Details: "Filter must contain an asterisk"},
		`{"start":1,"queries":[{"rate":"yes"}]}`: {Msg: "Unable to parse the given JSON", Details: "unexpected JSON type"},
	} {
		_, err := ParsePOST([]byte(body))
		var e *Error
		if !errors.As(err, &e) || e.Msg != want.Msg || e.Details != want.Details || !errors.Is(err, ErrBadRequest) {
			t.Errorf("%q: error %#v, want %+v", body, err, want)
		}
	}
}
