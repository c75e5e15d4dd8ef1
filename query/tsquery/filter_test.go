package tsquery

import (
	"strings"
	"testing"
)

func TestNewFilterErrors(t *testing.T) {
	for _, tc := range []struct{ typ, tagk, expr, msg string }{
		{"", "host", "x", "The filter type cannot be null or empty"},
		{LiteralOr, "", "x", "The tagk cannot be null or empty"},
		{"Literal_Or", "host", "x", "Could not find a tag value filter of the type: Literal_Or"},
		{LiteralOr, "host", "", "Filter cannot be null or empty"},
		{ILiteralOr, "host", "|", "Filter must contain more than just a pipe"},
		{NotLiteralOr, "host", "", "Filter cannot be null or empty"},
		{Wildcard, "host", "web", "Filter must contain an asterisk"},
		{IWildcard, "host", "", "Filter cannot be null or empty"},
		{Regexp, "host", "", "Filter cannot be null or empty"},
		{Regexp, "host", "a(", "error parsing regexp: missing closing ): `a(`"},
		{NotKey, "host", "x", "The filter must be empty for the not_key filter"},
	} {
		_, err := NewFilter(tc.typ, tc.tagk, tc.expr, false)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("NewFilter(%q, %q, %q) error %v, want %q", tc.typ, tc.tagk, tc.expr, err, tc.msg)
		}
	}
}

func TestMatch(t *testing.T) {
	const absent = "\x00absent"
	for _, tc := range []struct {
		typ, expr string
		yes, no   []string
	}{
		{LiteralOr, "web01|web02", []string{"web01", "web02"}, []string{"WEB01", "web03", "", absent}},
		{LiteralOr, "a|", []string{"a"}, []string{"", absent}}, // Java's split drops the trailing empty value
		{ILiteralOr, "Web01", []string{"web01", "WEB01"}, []string{"web02", absent}},
		{NotLiteralOr, "web01|web02", []string{"web03", "WEB01", absent}, []string{"web01"}},
		{NotILiteralOr, "web01", []string{"web03", absent}, []string{"WEB01", "web01"}},
		{Wildcard, "*", []string{"", "anything"}, []string{absent}},
		{Wildcard, "web*", []string{"web", "web01"}, []string{"Web01", "xweb", absent}},
		{Wildcard, "*.lga", []string{"a.lga", ".lga"}, []string{"a.lga.x", "a.LGA"}},
		{Wildcard, "web*lga", []string{"web01.lga", "xweb-lgax"}, []string{"lga-web"}}, // infix: unanchored
		{Wildcard, "*ab*b*", []string{"xabxb", "abb"}, []string{"xxab", "ba"}},         // parts in order
		{Wildcard, "a**b", []string{"ab", "axb"}, []string{"ba"}},
		{IWildcard, "WEB*", []string{"web01", "WEB01", "Web"}, []string{"xweb", absent}},
		{Regexp, "web[0-9]+", []string{"web1", "xxweb22yy"}, []string{"web", "WEB1", absent}},
		{Regexp, "^web$", []string{"web"}, []string{"web1"}},
		{NotKey, "", []string{absent}, []string{"", "x"}},
	} {
		m, err := Filter{Type: tc.typ, Tagk: "host", Filter: tc.expr}.Compile()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range tc.yes {
			if !m.Match(v, v != absent) {
				t.Errorf("%s(%s) should match %q", tc.typ, tc.expr, v)
			}
		}
		for _, v := range tc.no {
			if m.Match(v, v != absent) {
				t.Errorf("%s(%s) should not match %q", tc.typ, tc.expr, v)
			}
		}
	}
	if _, err := (Filter{Type: "bogus", Tagk: "h"}).Compile(); err == nil {
		t.Error("bogus type compiled")
	}
}

func TestFilterTypes(t *testing.T) {
	types := FilterTypes()
	var names []string
	for _, ft := range types {
		names = append(names, ft.Name)
		if ft.Description == "" || !strings.Contains(ft.Examples, `"type":"`+ft.Name+`"`) {
			t.Errorf("%s: %+v", ft.Name, ft)
		}
	}
	if got := strings.Join(names, ","); got != "iliteral_or,iwildcard,literal_or,not_iliteral_or,not_key,not_literal_or,regexp,wildcard" {
		t.Errorf("names %s", got)
	}
	for _, n := range names {
		if err := (Filter{Type: n, Tagk: "h", Filter: map[bool]string{true: "", false: "a*"}[n == NotKey]}).Validate(); err != nil {
			t.Errorf("%s listed but refused: %v", n, err)
		}
	}
}
