package jackson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001F` + "\x7f" + `"`},
		{"héllo ☃ 𝄞", `"héllo ☃ 𝄞"`},
		{"a\xffb\xe2\x98", "\"a\uFFFDb\uFFFD\uFFFD\""}, // a truncated sequence: one U+FFFD a byte
		{"</script>&", `"</script>&"`},
	} {
		if got := string(AppendString([]byte("x"), c.in)); got != "x"+c.want {
			t.Errorf("AppendString(%q) = %s, want %s", c.in, got[1:], c.want)
		}
		if got := string(AppendBytes(nil, []byte(c.in))); got != c.want {
			t.Errorf("AppendBytes(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// FuzzAppendString: the output is always valid JSON, and for valid UTF-8
// it reads back as the input.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"\\\n\x00", "\xff\xfe", "☃"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString(nil, s)
		if string(AppendBytes(nil, []byte(s))) != string(out) {
			t.Fatalf("AppendBytes and AppendString differ on %q", s)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, out, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("%q read back as %q", s, back)
		}
	})
}
