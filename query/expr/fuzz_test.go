package expr

import (
	"errors"
	"math"
	"testing"

	"github.com/tsd-db/tsd/query/tsquery"
)

func TestParseExpr(t *testing.T) {
	vals := map[string]float64{"a": 6, "b": 4, "c2": 2}
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"a + b * c2", 14}, {"(a + b) * c2", 20}, {"a - b - c2", 0}, {"a / b / c2", 0.75},
		{"-a + 1", -5}, {"a % b", 2}, {"1.5e1 - a", 9}, {"--a", 6}, {" a*(b-(c2)) ", 12},
	} {
		n, err := parseExpr(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if got := n.eval(func(v string) float64 { return vals[v] }); got != tc.want {
			t.Errorf("%q = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{"", "a +", "(a", "a)", "a $ b", "1..2", "a b"} {
		if _, err := parseExpr(in); err == nil {
			t.Errorf("%q: parsed", in)
		}
	}
}

// FuzzParseExpr: no input panics or recurses without bound; a parsed
// expression evaluates.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"a + b * c", "(a-(b))/2", "-x % 3", "1e309", "((((a))))", "a +* b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseExpr(s)
		if err != nil {
			var te *tsquery.Error
			if !errors.As(err, &te) {
				t.Fatalf("%q: %T", s, err)
			}
			return
		}
		_ = n.eval(func(string) float64 { return math.Pi })
	})
}

// FuzzParse: no body panics, and every refusal is a *tsquery.Error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"time":{"start":"1h-ago","aggregator":"sum"},"metrics":[{"id":"a","metric":"m"}],"expressions":[{"id":"e","expr":"a*2"}]}`,
		`{"time":{"start":"1","aggregator":"sum","downsampler":{"interval":"1m","aggregator":"avg"}},"metrics":[{"id":"a","metric":"m","timeOffset":"1d"}]}`,
		`{}`, `[]`, `{"metrics":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Parse(b); err != nil {
			var te *tsquery.Error
			if !errors.As(err, &te) {
				t.Fatalf("%q: %T %v", b, err, err)
			}
		}
	})
}
