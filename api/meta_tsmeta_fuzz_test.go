package api

import (
	"testing"

	"github.com/tsd-db/tsd/uid/index/lookup"
)

// FuzzTSMetaParsers: the TSMeta body, the search body and the search
// query never panic, and what parses keeps its invariants.
func FuzzTSMetaParsers(f *testing.F) {
	for _, s := range []string{
		`{"tsuid":"000001000001000001","max":"NaN","min":-1,"retention":"30","custom":{"a":"b"}}`,
		`{"query":"sys.*{host=web*}","limit":"5","startIndex":2}`, `sys.cpu{*=lga,dc=*}`, `{}`, `{"max":"Infinity"}`, `*`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, upd, err := parseTSMetaBody([]byte(s)); err == nil && upd.CustomSet && upd.Custom == nil && s == "" {
			t.Fatal("custom set from nothing")
		}
		if r, err := parseSearchBody([]byte(s)); err == nil && r.Limit == 0 && r.StartIndex == 0 && r.Query == "" && s == "{}" {
			t.Fatal("default limit lost")
		}
		if q, err := lookup.ParseSearch(s); err == nil && q.Metric == "" && len(q.Tags) == 0 {
			t.Fatalf("ParseSearch(%q) selects nothing without an error", s)
		}
	})
}
