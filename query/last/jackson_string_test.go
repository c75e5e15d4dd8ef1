package last

import (
	"strings"
	"testing"
)

// TestAppendStringIsJackson: strings are escaped as OpenTSDB's Jackson
// writer escapes them: \b and \f by name, other control bytes as upper-case
// \u00XX, DEL kept, invalid UTF-8 as U+FFFD (valid JSON).
func TestAppendStringIsJackson(t *testing.T) {
	in := "a\"\\\bb\f\x01\x1f\x7f\xffé"
	want := `"a\"\\\b` + "b" + `\f\u0001\u001F` + "\x7f\uFFFDé" + `"`
	got := string(AppendPoint(nil, &Point{Metric: in, Tags: []Tag{{Key: in, Value: in}}}))
	for _, field := range []string{`{"metric":` + want + `,`, `"tags":{` + want + `:` + want + `}`} {
		if !strings.Contains(got, field) {
			t.Errorf("AppendPoint = %q, want it to hold %q", got, field)
		}
	}
}
