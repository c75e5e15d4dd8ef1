package tsquery

import (
	"errors"
	"math"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func lit(k, v string, g bool) Filter { return Filter{Type: LiteralOr, Tagk: k, Filter: v, GroupBy: g} }

func TestParseM(t *testing.T) {
	max := int64(math.MaxInt64)
	for _, tc := range []struct {
		in   string
		want SubQuery
	}{
		{"sum:sys.cpu", SubQuery{Aggregator: "sum", Metric: "sys.cpu"}},
		{"sum:rate:1m-avg:sys.cpu{host=web01,dc=*}{env=prod|dev}", SubQuery{Aggregator: "sum", Metric: "sys.cpu",
			Rate: true, Downsample: "1m-avg", Filters: []Filter{lit("env", "prod|dev", false), lit("host", "web01", true),
				{Type: Wildcard, Tagk: "dc", Filter: "*", GroupBy: true}}}},
		{"avg:1h-sum:rate{counter,65535,1000}:if.octets", SubQuery{Aggregator: "avg", Metric: "if.octets",
			Rate: true, Downsample: "1h-sum", RateOptions: &RateOptions{Counter: true, CounterMax: 65535, ResetValue: 1000}}},
		{"sum:RATE{dropcounter}:m", SubQuery{Aggregator: "sum", Metric: "m", Rate: true,
			RateOptions: &RateOptions{Counter: true, CounterMax: max, DropResets: true}}},
		{"sum:rate{counter,,1000}:m", SubQuery{Aggregator: "sum", Metric: "m", Rate: true,
			RateOptions: &RateOptions{Counter: true, CounterMax: max, ResetValue: 1000}}},
		{"sum:rate{}:m", SubQuery{Aggregator: "sum", Metric: "m", Rate: true, RateOptions: &RateOptions{CounterMax: max}}},
		{"sum:ratefoo:m", SubQuery{Aggregator: "sum", Metric: "m", Rate: true}},
		{"sum:explicit_tags:m{host=*}", SubQuery{Aggregator: "sum", Metric: "m", ExplicitTags: true,
			Filters: []Filter{{Type: Wildcard, Tagk: "host", Filter: "*", GroupBy: true}}}},
		{"sum:percentiles[99.9, 50]:m", SubQuery{Aggregator: "sum", Metric: "m", Percentiles: []float32{50, 99.9}}},
		{"sum:pre-agg:ROLLUP_raw:show-histogram-buckets:m", SubQuery{Aggregator: "sum", Metric: "m",
			PreAggregate: true, RollupUsage: RollupRaw, ShowHistogramBuckets: true}},
		{"sum:rollup_bogus:m", SubQuery{Aggregator: "sum", Metric: "m", RollupUsage: RollupNoFallback}},
		{"sum:m{}{host=wildcard(web*)}", SubQuery{Aggregator: "sum", Metric: "m",
			Filters: []Filter{{Type: Wildcard, Tagk: "host", Filter: "web*"}}}},
		{"sum:m{}", SubQuery{Aggregator: "sum", Metric: "m"}},
		{"sum:m{host=Web*}", SubQuery{Aggregator: "sum", Metric: "m",
			Filters: []Filter{{Type: IWildcard, Tagk: "host", Filter: "Web*", GroupBy: true}}}},
		{"sum:m{host=REGEXP(web[0-9]+)}", SubQuery{Aggregator: "sum", Metric: "m",
			Filters: []Filter{{Type: Regexp, Tagk: "host", Filter: "web[0-9]+", GroupBy: true}}}},
		{"sum:m{}{host=not_key()}", SubQuery{Aggregator: "sum", Metric: "m",
			Filters: []Filter{{Type: NotKey, Tagk: "host"}}}},
		{"sum:m{host=web01}{host=web01}", SubQuery{Aggregator: "sum", Metric: "m",
			Filters: []Filter{lit("host", "web01", true)}}},
		{"sum:m{host=a|b,host=b|a}", SubQuery{Aggregator: "sum", Metric: "m",
			Filters: []Filter{lit("host", "a|b", true)}}},
		{"sum:m{host=a,dc=b}{host=c}", SubQuery{Aggregator: "sum", Metric: "m",
			Filters: []Filter{lit("host", "c", false), lit("host", "a", true), lit("dc", "b", true)}}},
		{"sum:foo:bar:m", SubQuery{Aggregator: "sum", Metric: "m"}}, // unknown parts are ignored
		{"sum:{host=a}", SubQuery{Aggregator: "sum", Filters: []Filter{lit("host", "a", true)}}},
	} {
		got, err := ParseM(tc.in)
		if err != nil {
			t.Errorf("ParseM(%q): %v", tc.in, err)
			continue
		}
		tc.want.UseFuzzyFilter, tc.want.UseMultiGets = true, true
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("ParseM(%q)\n got %+v\nwant %+v", tc.in, *got, tc.want)
		}
	}
}

func TestParseMErrors(t *testing.T) {
	for in, msg := range map[string]string{
		"":                             "The query string was empty",
		"sum":                          "Invalid parameter m=sum (not enough :-separated parts)",
		"a:b:c:d:e:f":                  "Invalid parameter m=a:b:c:d:e:f (too many :-separated parts)",
		"sum::m":                       "Invalid parameter m=sum::m (empty :-separated part)",
		"sum:":                         "Metric cannot be null or empty",
		"sum:m{host=web01":             "Missing '}' at the end of: m{host=web01",
		"sum:m{host}":                  "When parsing tag 'host': invalid tag: host",
		"sum:m{host=}":                 "When parsing tag 'host=': invalid tag: host=",
		"sum:m{host=a,}":               "When parsing tag '': invalid tag: ",
		"sum:m{a=b=c}":                 "When parsing tag 'a=b=c': invalid tag: a=b=c",
		"sum:m{}{host=foo(bar)}":       "When parsing filter 'host=foo(bar)': Could not find a tag value filter of the type: foo",
		"sum:m{host=wildcard(web)}":    "When parsing tag 'host=wildcard(web)': Filter must contain an asterisk",
		"sum:m{host=literal_or(web}":   "When parsing tag 'host=literal_or(web': Filter must end with a ')': literal_or(web",
		"sum:m{host=literal_or(|)}":    "When parsing tag 'host=literal_or(|)': Filter must contain more than just a pipe",
		"sum:m{host=(web)}":            "When parsing tag 'host=(web)': The filter type cannot be null or empty",
		"sum:m{host=not_key(x)}":       "When parsing tag 'host=not_key(x)': The filter must be empty for the not_key filter",
		"sum:m{host=literal_or()}":     "When parsing tag 'host=literal_or()': Filter cannot be null or empty",
		"sum:rate{counter,abc}:m":      "Max value of counter was not a number, received 'abc'",
		"sum:rate{counter,1,x}:m":      "Reset value of counter was not a number, received 'x'",
		"sum:rate{a,b,c,d}:m":          "Incorrect number of values in rate options specification, must be counter[,counter max value,reset value], recieved: 4 parts",
		"sum:rate{:m":                  "Invalid rate options specification: rate{",
		"sum:percentiles[x]:m":         "Malformated percentile query paramater: percentiles[x]",
		"sum:percentiles]50[:m":        "Malformated percentile query paramater: percentiles]50[",
		"sum:percentiles(50):m":        "Malformated percentile query paramater: percentiles(50)",
		"sum:m{host=regexp(web[)}":     "When parsing tag 'host=regexp(web[)': error parsing regexp: missing closing ]: `[`",
		"sum:m{}{=x}":                  "When parsing filter '=x': invalid tag: =x",
		"sum:m{host=wildcard(*),dc=*}": "",
	} {
		_, err := ParseM(in)
		switch {
		case msg == "" && err != nil:
			t.Errorf("ParseM(%q): %v", in, err)
		case msg != "" && (err == nil || err.Error() != msg || !errors.Is(err, ErrBadRequest)):
			t.Errorf("ParseM(%q) error %v, want %q", in, err, msg)
		}
	}
}

func TestParseTSUIDQuery(t *testing.T) {
	got, err := ParseTSUIDQuery("sum:rate:1m-avg:000001000001000001,000001000001000002,")
	want := &SubQuery{Aggregator: "sum", Rate: true, Downsample: "1m-avg", UseFuzzyFilter: true, UseMultiGets: true,
		TSUIDs: []string{"000001000001000001", "000001000001000002"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v", got, err)
	}
	for in, msg := range map[string]string{
		"":       "The tsuid query string was empty",
		"sum":    "Invalid parameter m=sum (not enough :-separated parts)",
		"sum::a": "Invalid parameter m=sum::a (empty :-separated part)",
	} {
		if _, err := ParseTSUIDQuery(in); err == nil || err.Error() != msg {
			t.Errorf("ParseTSUIDQuery(%q) error %v, want %q", in, err, msg)
		}
	}
}

func TestMStringRoundTrip(t *testing.T) {
	for _, in := range []string{
		"sum:rate{counter,65535,10}:1m-avg:percentiles[50,99.9]:m{host=web01,dc=*}{env=prod|dev}",
		"p99:pre-agg:rollup_fallback:explicit_tags:m{}{host=not_key()}",
		"sum:rate{dropcounter}:m{host=Web*}",
	} {
		sq, err := ParseM(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseM(sq.MString())
		if err != nil || !reflect.DeepEqual(sq, again) {
			t.Errorf("%q -> %q -> %+v %v", in, sq.MString(), again, err)
		}
	}
}

func TestParseGET(t *testing.T) {
	v, _ := url.ParseQuery("start=1h-ago&end=now&m=sum:m1&tsuid=avg:000001000001000001&m=max:5m-max:m2{host=*}" +
		"&show_query=false&ms&no_annotations=1&global_annotations&show_tsuids&show_stats&show_summary&padding" +
		"&timezone=America/Denver&use_calendar")
	q, err := ParseGET(v)
	if err != nil {
		t.Fatal(err)
	}
	if q.Start != "1h-ago" || q.End != "now" || q.Timezone != "America/Denver" || !q.ShowQuery || !q.MsResolution ||
		!q.NoAnnotations || !q.GlobalAnnotations || !q.ShowTSUIDs || !q.ShowStats || !q.ShowSummary || !q.Padding || !q.UseCalendar {
		t.Errorf("flags: %+v", q)
	}
	var got []string
	for _, sq := range q.Queries {
		got = append(got, sq.MString())
	}
	if strings.Join(got, " ") != "avg:000001000001000001 sum:m1 max:5m-max:m2{host=wildcard(*)}" {
		t.Errorf("sub-queries %q", got)
	}
	v, _ = url.ParseQuery("start=1&start=2&m=sum:m")
	if q, _ = ParseGET(v); q.Start != "2" || q.MsResolution {
		t.Errorf("last start wins, no ms: %+v", q)
	}
	for qs, msg := range map[string]string{
		"m=sum:m":           "Missing parameter <code>start</code>",
		"start=&m=sum:m":    "Missing parameter <code>start</code>",
		"start=1h-ago":      "Missing sub queries",
		"start=1h-ago&m=":   "The query string was empty",
		"start=1&tsuid=sum": "Invalid parameter m=sum (not enough :-separated parts)",
	} {
		v, _ := url.ParseQuery(qs)
		if _, err := ParseGET(v); err == nil || err.Error() != msg {
			t.Errorf("%q: error %v, want %q", qs, err, msg)
		}
	}
}
