package opentsdb

import "testing"

// TestAppendStringIsJackson: strings are escaped as OpenTSDB's Jackson
// writer escapes them: \b and \f by name, other control bytes as upper-case
// \u00XX, DEL kept, invalid UTF-8 as U+FFFD (valid JSON).
func TestAppendStringIsJackson(t *testing.T) {
	got := string(appendString(nil, "a\"\\\bb\f\x01\x1f\x7f\xffé"))
	want := `"a\"\\\b` + "b" + `\f\u0001\u001F` + "\x7f\uFFFDé" + `"`
	if got != want {
		t.Errorf("appendString = %q, want %q", got, want)
	}
}
