package lookup

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzGlob: a search glob matches exactly what the anchored regular
// expression with each * as .* matches, and ParseSearch never panics.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"sys.*", "sys.cpu"}, {"*.m", "ü.m"}, {"a*b*a", "aba"}, {"*", ""}, {"web0*", "web"}, {"**x", "xx"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		_, _ = ParseSearch(pattern)
		parts := strings.Split(pattern, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		re, err := regexp.Compile(`(?s)\A` + strings.Join(parts, ".*") + `\z`)
		if err != nil {
			return
		}
		if got, want := newGlob(pattern).match(name), re.MatchString(name); got != want {
			t.Fatalf("glob %q on %q = %v, regexp says %v", pattern, name, got, want)
		}
	})
}
