package lookup

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseM(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Query
		err  string
	}{
		{in: "sys.cpu", want: Query{Metric: "sys.cpu", Limit: DefaultLimit}},
		{in: "sys.cpu{}", want: Query{Metric: "sys.cpu", Limit: DefaultLimit}},
		{in: "*{host=*}", want: Query{Metric: "*", Tags: []Pair{{"host", "*"}}, Limit: DefaultLimit}},
		{in: "{*=web01,=lga,dc=}", want: Query{Tags: []Pair{{"*", "web01"}, {"", "lga"}, {"dc", ""}}, Limit: DefaultLimit}},
		{in: "m{a=b,a=c}", want: Query{Metric: "m", Tags: []Pair{{"a", "b"}, {"a", "c"}}, Limit: DefaultLimit}},
		{in: "", err: "Metric string was empty"},
		{in: "m{a=b", err: "Missing '}' at the end of: m{a=b"},
		{in: "{}", err: "Missing metric and tags: {}"},
		{in: "m{a}", err: "When parsing tag 'a': Missing tag pair"},
		{in: "m{a=b,}", err: "When parsing tag '': Missing tag pair"},
		{in: "m{a=b=c}", err: "When parsing tag 'a=b=c': invalid tag: a=b=c"},
		{in: "m{ab}", err: "When parsing tag 'ab': invalid tag: ab"},
	} {
		got, err := ParseM(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseM(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseM(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseJSON(t *testing.T) {
	got, err := ParseJSON([]byte(`{"metric":"sys.cpu","tags":[{"key":"host","value":"*"},{"key":null,"value":"lga"}],"limit":"7","useMeta":true}`))
	want := Query{Metric: "sys.cpu", Tags: []Pair{{"host", "*"}, {"", "lga"}}, Limit: 7}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseJSON = %+v, %v", got, err)
	}
	if got, err := ParseJSON([]byte(`{"metric":"m"}`)); err != nil || got.Limit != DefaultLimit {
		t.Errorf("ParseJSON without a limit = %+v, %v; want limit %d", got, err, DefaultLimit)
	}
	for _, bad := range []string{`{"metric":`, `{"limit":"x"}`, `[]`, `{"tags":{}}`} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%s) accepted", bad)
		}
	}
}

// unparse writes q back as an m= string ParseM reads as q.
func unparse(q Query) string {
	if len(q.Tags) == 0 {
		return q.Metric
	}
	parts := make([]string, len(q.Tags))
	for i, p := range q.Tags {
		parts[i] = p.Key + "=" + p.Value
	}
	return q.Metric + "{" + strings.Join(parts, ",") + "}"
}

// FuzzParseM: no panics; what parses writes back and parses to the same
// query.
func FuzzParseM(f *testing.F) {
	for _, s := range []string{"sys.cpu", "m{}", "*{host=*}", "{*=a,=b,c=}", "m{a=b", "{}", "m{=}", "m{a==b}", "é{ü=ß}", "m{{a=b}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseM(s)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("ParseM(%q) error %T", s, err)
			}
			return
		}
		if strings.ContainsAny(q.Metric, "{") && len(q.Tags) == 0 {
			return // "a{b{}" keeps the brace in the metric; unparse cannot tell
		}
		back, err := ParseM(unparse(q))
		if err != nil || !reflect.DeepEqual(back, q) {
			t.Fatalf("ParseM(%q) = %+v; re-parse of %q = %+v, %v", s, q, unparse(q), back, err)
		}
	})
}

// FuzzParseJSON: no panics, and errors are *ParseError.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"metric":"m","tags":[{"key":"k","value":"v"}],"limit":5}`, `{}`, `{"limit":"9"}`, `[`, `{"tags":[null]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ParseJSON(b); err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("ParseJSON error %T", err)
			}
		}
	})
}
