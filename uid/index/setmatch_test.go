package index

import (
	"regexp"
	"slices"
	"testing"
)

// TestSetMatches checks the expressions Grafana's multi-value variables
// produce become their names, and that what a set cannot express stays an
// expression.
func TestSetMatches(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []string // nil: not a set
	}{
		{`web1`, []string{"web1"}},
		{`web1|web2`, []string{"web1", "web2"}},
		{`(web1|web2)`, []string{"web1", "web2"}},
		{`(?:host_1|host_2|host_10)`, []string{"host_1", "host_10", "host_2"}},
		{`a\.b|c\-d`, []string{"a.b", "c-d"}},
		{`dc[12]-(x|y)`, []string{"dc1-x", "dc1-y", "dc2-x", "dc2-y"}},
		{``, []string{""}},
		{`|web1`, []string{"", "web1"}},
		{`.*`, nil},
		{`.+`, nil},
		{`web.*`, nil},
		{`(?i)web1`, nil},
		{`web1?`, nil},
		{`web{2}`, nil},
		{`^web1$`, nil},
		{`a)|(?:b`, nil},
		{`[^a]`, nil},
		{`[\x{0}-\x{10FFFF}]`, nil},
		{`\x{FFFD}`, nil},
	} {
		got, ok := setMatches(c.pattern)
		slices.Sort(got)
		got = slices.Compact(got)
		if c.want == nil {
			if ok {
				t.Errorf("setMatches(%q) = %q, want no set", c.pattern, got)
			}
			continue
		}
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("setMatches(%q) = %q, %v, want %q", c.pattern, got, ok, c.want)
		}
	}
}

// TestSetMatchesAsRegexp compares membership in the set with the anchored
// expression on values in and around it.
func TestSetMatchesAsRegexp(t *testing.T) {
	values := []string{"", "web1", "web2", "web10", "Web1", "web", "a.b", "axb", "host_1", "host_10", "dc1-x", "\xff", "\uFFFD", "é", "e\u0301"}
	for _, p := range []string{`web1|web2`, `(web1|web10)`, `a\.b`, `host_(1|10)`, `dc[1-3]-[xy]`, `|web`, `é|e`, `[é-ë]`} {
		checkSetAgainstRegexp(t, p, values)
	}
}

func checkSetAgainstRegexp(t *testing.T, pattern string, values []string) {
	t.Helper()
	set, ok := setMatches(pattern)
	if !ok {
		return
	}
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		t.Fatalf("setMatches(%q) gave a set for an expression that does not compile: %v", pattern, err)
	}
	for _, v := range append(slices.Clone(set), values...) {
		if in, want := slices.Contains(set, v), re.MatchString(v); in != want {
			t.Fatalf("pattern %q, value %q: in the set %v, the expression matches %v", pattern, v, in, want)
		}
	}
}

// FuzzSetMatches: whenever an expression becomes a set, a value is in it
// exactly when the anchored expression matches it.
func FuzzSetMatches(f *testing.F) {
	for _, s := range [][2]string{{`web1|web2`, "web1"}, {`(a|b)[cd]`, "bd"}, {`x\.y`, "x.y"}, {`|a`, ""}, {`[é-ë]`, "ê"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		checkSetAgainstRegexp(t, pattern, []string{value})
	})
}
