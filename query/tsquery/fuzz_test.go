package tsquery

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseM checks that no m= value panics, every refusal is an *Error,
// and what parses prints back (MString) to the same sub-query, except when
// a filter expression holds the braces, parentheses or separators the
// printed form cannot quote.
func FuzzParseM(f *testing.F) {
	for _, s := range []string{
		"sum:sys.cpu", "sum:rate:1m-avg:sys.cpu{host=web01,dc=*}{env=prod|dev}",
		"avg:1h-sum:rate{counter,65535,1000}:if.octets", "sum:rate{dropcounter,,5}:m",
		"sum:percentiles[99.9, 50]:pre-agg:rollup_raw:m", "sum:explicit_tags:m{}{host=wildcard(web*)}",
		"sum:m{host=regexp(web[0-9]+)}", "sum:m{host=not_key()}", "p99:show-histogram-buckets:m{a=b|c}{d=e*}",
		"a:b:c:d:e:f", "sum::m", "sum:m{", "sum:m{a=b}{c=d", "sum:rate{a,b,c,d}:m", "sum:m{x=(y)}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sq, err := ParseM(s)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("ParseM(%q): error %v is not a bad request", s, err)
			}
			return
		}
		if !printable(sq) {
			return
		}
		again, err := ParseM(sq.MString())
		if err != nil || !reflect.DeepEqual(sq, again) {
			t.Fatalf("ParseM(%q) = %+v\nprinted %q\nparsed back %+v, %v", s, sq, sq.MString(), again, err)
		}
	})
}

// printable reports whether MString can represent sq exactly.
func printable(sq *SubQuery) bool {
	if strings.ContainsAny(sq.Metric, "{}") || sq.Metric == "" || strings.ContainsAny(sq.Downsample, "{}") {
		return false
	}
	for _, f := range sq.Filters {
		if strings.ContainsAny(f.Filter+f.Tagk, "{}(),=:") {
			return false
		}
	}
	return true
}

// FuzzParseTime checks that no time string panics and that an accepted
// time prints back as "<ms>ms" to the same instant.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"now", "1h-ago", "1700000000", "1700000000000", "1700000000.123", "500ms",
		"2024/06/19", "2024/06/19-12:30", "2024/06/19 12:30:15", "-5", "abc", "1.5", "2024/13/45 99:99:99",
		"99999999999999999999ms", "+", "1x-ago", "9999999999999999y-ago"} {
		f.Add(s, "")
		f.Add(s, "America/Denver")
	}
	f.Fuzz(func(t *testing.T, s, tz string) {
		v, err := ParseTime(s, tz, now, nil)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("ParseTime(%q, %q): error %v is not a bad request", s, tz, err)
			}
			return
		}
		if v < 0 {
			return // "" gives -1; far past dates or large -ago durations go negative
		}
		back, err := ParseTime(strconv.FormatInt(v, 10)+"ms", "", now, nil)
		if err != nil || back != v {
			t.Fatalf("ParseTime(%q) = %d, printed back %d, %v", s, v, back, err)
		}
	})
}

// FuzzParsePOST checks that no body panics (parse and validate), every
// refusal is an *Error, and an accepted body marshals back to JSON that
// parses to the same query.
func FuzzParsePOST(f *testing.F) {
	for _, s := range []string{
		`{"start":1700000000000,"queries":[{"metric":"m","aggregator":"avg","downsample":"1m-avg","tags":{"host":"a|b","dc":"*"}}]}`,
		`{"start":"1h-ago","end":"now","timezone":"UTC","useCalendar":true,"queries":[{"aggregator":"sum","metric":"m",` +
			`"filters":[{"type":"iwildcard","tagk":"h","filter":"W*","groupBy":true}],"rate":true,` +
			`"rateOptions":{"counter":true,"counterMax":65535,"resetValue":5,"dropResets":true},"percentiles":[99,50]}]}`,
		`{"start":1,"queries":[{"aggregator":"sum","tsuids":["000001000001000001"],"rollupUsage":"rollup_raw"}]}`,
		`{"start":1,"queries":[{"aggregator":"sum","metric":"m"},{"aggregator":"sum","metric":"m"}]}`,
		`{`, `[]`, `{"start":{}}`, `{"queries":[null]}`, `{"start":"1","queries":[{"rate":"x"}]}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := ParsePOST(body)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("ParsePOST: error %v is not a bad request", err)
			}
			return
		}
		js, err := json.Marshal(q)
		if err != nil {
			t.Fatalf("marshal %+v: %v", q, err)
		}
		again, err := ParsePOST(js)
		if err != nil || !reflect.DeepEqual(q, again) {
			t.Fatalf("body %q\nparsed %+v\nprinted %s\nparsed back %+v, %v", body, q, js, again, err)
		}
		if err := q.Validate(ValidateOptions{Now: now}); err != nil && !errors.Is(err, ErrBadRequest) {
			t.Fatalf("Validate: error %v is not a bad request", err)
		}
	})
}
