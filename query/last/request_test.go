package last

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/tsquery"
)

func TestParseGET(t *testing.T) {
	for _, tc := range []struct {
		qs   string
		want *Query
		err  string
	}{
		{qs: "timeseries=sys.cpu{host=web01,dc=lga}&resolve&back_scan=24", want: &Query{ResolveNames: true, BackScan: 24,
			Queries: []SubQuery{{Metric: "sys.cpu", Tags: []Tag{{"host", "web01"}, {"dc", "lga"}}}}}},
		{qs: "timeseries=a&timeseries=b{}&tsuids=000001000001000001,000002", want: &Query{
			Queries: []SubQuery{{Metric: "a"}, {Metric: "b"}, {TSUIDs: []string{"000001000001000001", "000002"}}}}},
		{qs: "timeseries=a{k=v,k=v}", want: &Query{Queries: []SubQuery{{Metric: "a", Tags: []Tag{{"k", "v"}}}}}},
		{qs: "resolve", err: "Missing sub queries"},
		{qs: "timeseries=a&back_scan=x", err: "Unable to parse back_scan parameter"},
		{qs: "timeseries=a&back_scan=-1", err: "Backscan must be zero or a positive number"},
		{qs: "timeseries=a{k=v", err: "Missing '}' at the end of: a{k=v"},
		{qs: "timeseries=a{", err: "Missing '}' at the end of: a{"},
		{qs: "timeseries=a{k}", err: "When parsing tag 'k': invalid tag: k"},
		{qs: "timeseries=a{k=v,}", err: "When parsing tag '': invalid tag: "},
		{qs: "timeseries=a{k=v=w}", err: "When parsing tag 'k=v=w': invalid tag: k=v=w"},
		{qs: "timeseries=a{k=v,k=w}", err: "When parsing tag 'k=w': duplicate tag: k=w, tags={k=v}"},
		{qs: "timeseries={k=v}", err: "Metric cannot be null or empty"},
	} {
		v, err := url.ParseQuery(tc.qs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseGET(v)
		checkParse(t, tc.qs, got, err, tc.want, tc.err)
	}
}

func checkParse(t *testing.T, in string, got *Query, err error, want *Query, wantErr string) {
	t.Helper()
	if wantErr != "" {
		var te *tsquery.Error
		if !errors.As(err, &te) || te.Msg != wantErr {
			t.Errorf("%s: error %v, want a *tsquery.Error %q", in, err, wantErr)
		}
		return
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %+v, %v\nwant %+v", in, got, err, want)
	}
}

func TestParsePOST(t *testing.T) {
	for _, tc := range []struct {
		body string
		want *Query
		err  string
	}{
		{body: `{"queries":[{"metric":"sys.cpu","tags":{"host":"web01","dc":"lga"}},{"tsuids":["000001000001000001"]}],"resolveNames":true,"backScan":24}`,
			want: &Query{ResolveNames: true, BackScan: 24, Queries: []SubQuery{
				{Metric: "sys.cpu", Tags: []Tag{{"dc", "lga"}, {"host", "web01"}}}, {TSUIDs: []string{"000001000001000001"}}}}},
		{body: `{"Queries":[{"Metric":"m"}],"other":1}`, want: &Query{Queries: []SubQuery{{Metric: "m"}}}},
		{body: "  ", err: "Missing message content"},
		{body: `{"queries":`, err: "Unable to parse the given JSON"},
		{body: `{"queries":[],"backScan":1}`, err: "Missing sub queries"},
		{body: `{"queries":[{"metric":"m"}],"backScan":-2}`, err: "Backscan must be zero or a positive number"},
		{body: `{"queries":[{"tags":{"a":"b"}}]}`, err: "Metric cannot be null or empty"},
		{body: `{"queries":[{"metric":"m","tags":{"a":""}}]}`, err: "invalid tag: a="},
		{body: `{"queries":[{"metric":"m"}],"backScan":"x"}`, err: "Unable to parse the given JSON"},
	} {
		got, err := ParsePOST([]byte(tc.body))
		checkParse(t, tc.body, got, err, tc.want, tc.err)
	}
}

// FuzzParseTimeSeries: no input panics; a parsed sub-query printed back in
// the same grammar parses to itself.
func FuzzParseTimeSeries(f *testing.F) {
	for _, s := range []string{"sys.cpu{host=web01,dc=lga}", "a", "a{}", "a{k=v,k=v}", "a{k=v", "{=}", "a{,}", "a{k=v=w}", "a}{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sq, err := ParseTimeSeries(s)
		if err != nil {
			var te *tsquery.Error
			if !errors.As(err, &te) {
				t.Fatalf("%q: error %T is not a *tsquery.Error", s, err)
			}
			return
		}
		if len(sq.Tags) == 0 || strings.ContainsAny(sq.Metric, "{") {
			return
		}
		parts := make([]string, len(sq.Tags))
		for i, tg := range sq.Tags {
			parts[i] = tg.Key + "=" + tg.Value
		}
		back, err := ParseTimeSeries(sq.Metric + "{" + strings.Join(parts, ",") + "}")
		if err != nil || !reflect.DeepEqual(back, sq) {
			t.Fatalf("%q: parsed %+v, printed and parsed again %+v, %v", s, sq, back, err)
		}
	})
}

// FuzzParsePOST: no body panics, and every refusal is a *tsquery.Error.
func FuzzParsePOST(f *testing.F) {
	for _, s := range []string{`{"queries":[{"metric":"m","tags":{"a":"b"}}],"resolveNames":true,"backScan":3}`,
		`{"queries":[{"tsuids":["000001"]}]}`, `[]`, `{"queries":null}`, `{"backScan":1e99}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParsePOST(b)
		if err != nil {
			var te *tsquery.Error
			if !errors.As(err, &te) {
				t.Fatalf("%q: error %T is not a *tsquery.Error", b, err)
			}
			return
		}
		if len(q.Queries) == 0 || q.BackScan < 0 {
			t.Fatalf("%q: accepted %+v", b, q)
		}
	})
}
