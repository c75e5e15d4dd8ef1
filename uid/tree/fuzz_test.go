package tree

import (
	"regexp"
	"testing"
)

// FuzzParseRuleJSON: a rule body never panics the parser, and a rule it
// accepts reads back the same from the JSON tsd stores for it.
func FuzzParseRuleJSON(f *testing.F) {
	f.Add([]byte(`{"type":"METRIC","field":"host","regex":"^[a-z]$","separator":".","description":"My Description","notes":"Got Notes?","display_format":"POP {ovalue}","level":1,"order":2,"customField":"","regexGroupIdx":1,"treeId":42,"UnknownKey":"UnknownVal"}`))
	f.Add([]byte(`{"treeId":"1","level":"0","type":"tagk_custom","customField":"x","field":"y"}`))
	f.Add([]byte(`{"type":null,"regex":"(","level":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseRuleJSON(b)
		if err != nil {
			return
		}
		out := e.Rule.AppendJSON(nil)
		back, err := ParseRuleJSON(out)
		if err != nil {
			t.Fatalf("stored rule %s does not parse: %v", out, err)
		}
		a, c := e.Rule, back.Rule
		a.re, c.re = nil, nil
		if a != c {
			t.Fatalf("rule %+v read back as %+v from %s", a, c, out)
		}
	})
}

// FuzzParseTreeJSON: a tree body never panics the parser, and the tree it
// edits reads back the same from its stored JSON.
func FuzzParseTreeJSON(f *testing.F) {
	f.Add([]byte(`{"name":"Test Tree","description":"My Description","notes":"Details","enabled":true,"strictMatch":"TRUE","storeFailures":1,"treeId":7}`))
	f.Add([]byte(`{"treeId":"x"}`))
	f.Add([]byte(`{"name":{"nested":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, _, err := ParseTreeJSON(b)
		if err != nil {
			return
		}
		tr := &Tree{ID: 1, Created: 1356998400}
		e.apply(tr, true)
		var back Tree
		if err := decodeStoredTree(&back, tr.appendStorageJSON(nil)); err != nil {
			t.Fatal(err)
		}
		back.ID = 1
		if back.Name != tr.Name || back.Description != tr.Description || back.Notes != tr.Notes ||
			back.Enabled != tr.Enabled || back.StrictMatch != tr.StrictMatch || back.StoreFailures != tr.StoreFailures || back.Created != tr.Created {
			t.Fatalf("tree %+v read back as %+v", tr, back)
		}
	})
}

// FuzzBuild: any metric, tag value, separator, regex and display format
// runs through the rules without a panic, and every branch the run makes
// has a name.
func FuzzBuild(f *testing.F) {
	f.Add("sys.cpu.0", "web-01.lga.mysite.com", `\.`, `^([a-zA-Z]+)(\-|[0-9])*.*\..*$`, "V: {value}", 0)
	f.Add("..", "", "", "()", "{tag_name}{tsuid}", 3)
	f.Add("a", "b", "x*", "", "", -1)
	f.Fuzz(func(t *testing.T, metric, tagv, sep, re, format string, idx int) {
		if _, err := regexp.Compile(sep); err != nil {
			sep = ""
		}
		tr := &Tree{ID: 1, StrictMatch: idx%2 == 0}
		r0 := &Rule{Type: RuleMetric, Separator: sep, TreeID: 1, DisplayFormat: format}
		r1 := &Rule{Type: RuleTagK, Field: "host", Regex: re, RegexGroupIdx: max(idx, 0) % 4, Level: 1, TreeID: 1}
		if r1.compile() != nil {
			r1.Regex = ""
		}
		tr.addRule(r0)
		tr.addRule(r1)
		res := Build(tr, &Meta{TSUID: "010203", Metric: Name{Name: metric}, Tags: []Tag{{K: Name{Name: "host"}, V: Name{Name: tagv}}}})
		var walk func(b *Branch)
		walk = func(b *Branch) {
			for _, c := range b.Branches {
				if c.DisplayName == "" {
					t.Fatalf("an unnamed branch under %q", b.DisplayName)
				}
				walk(c)
			}
		}
		walk(res.Root)
	})
}
