package expr

import "testing"

// TestAppendStringIsJackson: strings are escaped as OpenTSDB's Jackson
// writer escapes them: \b and \f by name, other control bytes as upper-case
// \u00XX, DEL kept, invalid UTF-8 as U+FFFD (valid JSON).
func TestAppendStringIsJackson(t *testing.T) {
	in := "a\"\\\bb\f\x01\x1f\x7f\xffé"
	s := `"a\"\\\b` + "b" + `\f\u0001\u001F` + "\x7f\uFFFDé" + `"`
	got := string(appendOutputHead(nil, &outputSets{out: Output{ID: in, Alias: in}}))
	if want := `{"id":` + s + `,"alias":` + s + `,"dps":[`; got != want {
		t.Errorf("appendOutputHead = %q, want %q", got, want)
	}
}
