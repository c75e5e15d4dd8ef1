package jsonw

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
)

var stringSeed = flag.Uint64("jsonw.seed", 0, "seed of TestStringModesMatchReferences' random strings (0: time-based)")

// TestAppendStringForms: each mode's escapes, one case a rule.
func TestAppendStringForms(t *testing.T) {
	for _, c := range []struct {
		in                  string
		json, jackson, html string
	}{
		{"", `""`, `""`, `""`},
		{`a"b\c`, `"a\"b\\c"`, `"a\"b\\c"`, `"a\"b\\c"`},
		{"\n\r\t", `"\n\r\t"`, `"\n\r\t"`, `"\n\r\t"`},
		{"\b\f", `"\u0008\u000c"`, `"\b\f"`, `"\u0008\u000c"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f\"", `"\u0000\u0001\u001F` + "\x7f\"", `"\u0000\u0001\u001f` + "\x7f\""},
		{"héllo ☃ 𝄞", `"héllo ☃ 𝄞"`, `"héllo ☃ 𝄞"`, `"héllo ☃ 𝄞"`},
		{"</script>&", `"</script>&"`, `"</script>&"`, `"\u003c/script\u003e\u0026"`},
		{"\u2028\u2029", "\"\u2028\u2029\"", "\"\u2028\u2029\"", `"\u2028\u2029"`},
		// A truncated sequence: one replacement a byte.
		{"a\xffb\xe2\x98", "\"a\uFFFDb\uFFFD\uFFFD\"", "\"a\uFFFDb\uFFFD\uFFFD\"", `"a\ufffdb\ufffd\ufffd"`},
		{"\uFFFD", "\"\uFFFD\"", "\"\uFFFD\"", "\"\uFFFD\""}, // a valid U+FFFD is text
	} {
		for m, want := range map[Mode]string{JSON: c.json, Jackson: c.jackson, HTML: c.html} {
			if got := string(m.AppendString([]byte("x"), c.in)); got != "x"+want {
				t.Errorf("mode %d: AppendString(%q) = %s, want %s", m, c.in, got[1:], want)
			}
			if got := string(m.AppendBytes(nil, []byte(c.in))); got != want {
				t.Errorf("mode %d: AppendBytes(%q) = %s, want %s", m, c.in, got, want)
			}
		}
	}
}

// TestStringModesMatchReferences: over edge and random strings, JSON
// writes what json-iterator's Stream.WriteString writes (Prometheus's
// label sets), HTML what its standard-library mode writes (Prometheus's
// other strings), and Jackson what Jackson's escape table
// (CharTypes.sOutputEscapes128, upper-case HEX_CHARS) gives; JSON and
// Jackson first replace each invalid UTF-8 byte with U+FFFD, which their
// references would copy.
func TestStringModesMatchReferences(t *testing.T) {
	seed := *stringSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-jsonw.seed to repeat)", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	cases := edgeStrings()
	for range 20_000 {
		cases = append(cases, randomString(rng))
	}
	stream := jsoniter.ConfigDefault.BorrowStream(nil)
	defer jsoniter.ConfigDefault.ReturnStream(stream)
	for _, s := range cases {
		stream.Reset(nil)
		stream.WriteString(replaceInvalid(s))
		checkMode(t, JSON, s, string(stream.Buffer()))
		html, err := jsoniter.ConfigCompatibleWithStandardLibrary.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		checkMode(t, HTML, s, string(html))
		checkMode(t, Jackson, s, jacksonModel(replaceInvalid(s)))
	}
}

func checkMode(t *testing.T, m Mode, s, want string) {
	t.Helper()
	if got := string(m.AppendString(nil, s)); got != want {
		t.Fatalf("mode %d: AppendString(%q) = %q, reference %q", m, s, got, want)
	}
	if got := string(m.AppendBytes(nil, []byte(s))); got != want {
		t.Fatalf("mode %d: AppendBytes(%q) = %q, reference %q", m, s, got, want)
	}
}

// edgeStrings are every byte alone, and the runes and sequences each mode
// treats apart, alone and between text.
func edgeStrings() []string {
	var out []string
	for c := range 256 {
		out = append(out, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range []string{"\u2028", "\u2029", "\u2027", "\u202a", "\uFFFD", "é", "☃", "𝄞", "\U0010FFFF",
		"\xc3", "\xe2\x98", "\xf0\x9d\x84", "\xed\xa0\x80", "\xc0\x80", "\xf8\x88\x80\x80\x80", "\xf4\x90\x80\x80"} {
		out = append(out, s, "x"+s+"y", s+s)
	}
	return out
}

// pieces are what random strings are made of.
var pieces = []string{"a", "Z", "0", " ", "\"", "\\", "/", "<", ">", "&", "\x7f", "\x00", "\x1f", "\b", "\f", "\n",
	"\r", "\t", "é", "☃", "𝄞", "\u2028", "\u2029", "\uFFFD", "\xff", "\xc3", "\xe2\x98", "\xed\xa0\x80", "\xc0\x80"}

func randomString(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(24) {
		if rng.IntN(4) == 0 {
			b.WriteByte(byte(rng.UintN(256)))
		} else {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
	}
	return b.String()
}

// replaceInvalid replaces each invalid UTF-8 byte of s with U+FFFD.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// jacksonModel writes valid UTF-8 s as Jackson's WriterBasedJsonGenerator
// does with its default escapes: " and \ and \b \t \n \f \r by name, other
// code points below 0x20 as \u00XX in upper case, everything else as is.
func jacksonModel(s string) string {
	named := map[rune]string{'"': `\"`, '\\': `\\`, '\b': `\b`, '\t': `\t`, '\n': `\n`, '\f': `\f`, '\r': `\r`}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch e, ok := named[r]; {
		case ok:
			b.WriteString(e)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzAppendString: every mode's output is valid JSON, the same for a
// string and its bytes, and for valid UTF-8 reads back as the input.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"\\\n\x00", "\xff\xfe", "☃", "<\u2028>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range []Mode{JSON, Jackson, HTML} {
			out := m.AppendString(nil, s)
			if string(m.AppendBytes(nil, []byte(s))) != string(out) {
				t.Fatalf("mode %d: AppendBytes and AppendString differ on %q", m, s)
			}
			var back string
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("mode %d: %q gave invalid JSON %s: %v", m, s, out, err)
			}
			if back != replaceInvalid(s) {
				t.Fatalf("mode %d: %q read back as %q", m, s, back)
			}
		}
	})
}

// TestAppendStringAllocs: appending to a buffer with room allocates
// nothing, for strings and bytes, escapes and non-ASCII text included.
func TestAppendStringAllocs(t *testing.T) {
	s := "host<\"web01\">\n\x01é\u2028\xff"
	b := []byte(s)
	dst := make([]byte, 0, 256)
	for _, m := range []Mode{JSON, Jackson, HTML} {
		if n := testing.AllocsPerRun(100, func() { dst = m.AppendString(dst[:0], s) }); n != 0 {
			t.Errorf("mode %d: AppendString allocates %v times", m, n)
		}
		if n := testing.AllocsPerRun(100, func() { dst = m.AppendBytes(dst[:0], b) }); n != 0 {
			t.Errorf("mode %d: AppendBytes allocates %v times", m, n)
		}
	}
}
