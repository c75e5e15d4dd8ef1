package gexp

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/tsquery"
)

// TestParse: the grammar of OpenTSDB 2.4.1's src/parser.jj: metric
// parameters rebuilt as m= strings in reading order across expressions,
// bare names as arguments, the function looked up while parsing.
func TestParse(t *testing.T) {
	trees, metrics, err := Parse([]string{
		"scale( sum:1m-avg:rate:sys.cpu{host=web01|web02 , dc=*} , 2.5)",
		"alias(absolute(max:m.x),name@host,[b])",
	}, []string{"first"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"first", "sum:1m-avg:rate:sys.cpu{host=web01|web02,dc=*}", "max:m.x"}
	if !slices.Equal(metrics, want) {
		t.Errorf("metrics %q, want %q", metrics, want)
	}
	if len(trees) != 2 || trees[0].params[0].metric != 1 || !slices.Equal(trees[0].args, []string{"2.5"}) {
		t.Errorf("scale tree %+v", trees[0])
	}
	a := trees[1]
	if a.params[0].sub == nil || a.params[0].sub.params[0].metric != 2 || !slices.Equal(a.args, []string{"name@host", "[b]"}) {
		t.Errorf("alias tree %+v", a)
	}
	if _, _, err := Parse([]string{"scale(sum:m,2) trailing (ignored"}, nil); err != nil {
		t.Errorf("trailing input: %v", err)
	}
	for _, bad := range []struct{ in, msg string }{
		{"scale(sum:m", "Failed to parse scale(sum:m"},
		{"scale()", "Failed to parse scale()"},
		{"scale(sum:a:b:c:d)", "Failed to parse scale(sum:a:b:c:d)"},
		{"scale(sum:m{host})", "Failed to parse scale(sum:m{host})"},
		{"scale(sum:m{host=a b})", "Failed to parse scale(sum:m{host=a b})"},
		{"(sum:m)", "Failed to parse (sum:m)"},
		{"firstDifference(sum:m)", "Function firstDifference has not been implemented"}, // 2.5 only
		{"scale(nope(sum:m),1)", "Function nope has not been implemented"},
		{strings.Repeat("absolute(", 100) + "sum:m" + strings.Repeat(")", 100), "Failed to parse"},
	} {
		_, _, err := Parse([]string{bad.in}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), bad.msg) || !errors.Is(err, tsquery.ErrBadRequest) {
			t.Errorf("%q: %v, want 400 %q", bad.in, err, bad.msg)
		}
	}
}
