package gexp

import (
	"errors"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/tsquery"
)

// FuzzParse: any input parses or fails with a 400, never panics; a parsed
// expression's metric strings are valid m= sub-queries' compact form, each
// metric index points into the list.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"scale(sum:m{host=*},2)", "alias(absolute(max:1m-avg:rate:m),@host)", "timeShift(sum:m,'1min')",
		"scale(", "a(b(c(d:e)))", "x(*,*)", "scale(sum:m{a=b,c=d},1)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		trees, metrics, err := Parse([]string{s}, nil)
		if err != nil {
			if !errors.Is(err, tsquery.ErrBadRequest) {
				t.Fatalf("%q: %v is not a 400", s, err)
			}
			return
		}
		var walk func(*Tree)
		walk = func(tr *Tree) {
			for _, p := range tr.params {
				if p.sub != nil {
					walk(p.sub)
				} else if p.metric < 0 || p.metric >= len(metrics) {
					t.Fatalf("%q: metric index %d of %d", s, p.metric, len(metrics))
				}
			}
		}
		for _, tr := range trees {
			walk(tr)
		}
		for _, m := range metrics {
			if strings.ContainsAny(m, " \t()") || !strings.Contains(m, ":") {
				t.Fatalf("%q: metric %q", s, m)
			}
		}
	})
}
