package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	src := "# OpenTSDB config\n" +
		"! also a comment\n" +
		"\n" +
		"   \t\n" +
		"tsd.network.port = 4242\n" +
		"  tsd.network.bind=0.0.0.0   \n" +
		"tsd.http.cachedir : /tmp/tsd\n" +
		"tsd.storage.hbase.zk_quorum localhost:2181\n" +
		"tsd.http.request.cors_headers = Authorization, \\\n" +
		"    Content-Type, \\\n" +
		"    Accept\n" +
		"tsd.core.tag.allow_specialchars = \\!\\#\\=\\:\\ \r\n" +
		"key\\ with\\=odd\\:chars = v\r" +
		"unicode = \\u00e9t\\u00C9 \\uD83D\\uDE00 \\uD800x\n" +
		"escapes = a\\tb\\nc\\\\d\\qe\n" +
		"empty =\n" +
		"trailing = ends with backslash \\"
	want := []property{
		{"tsd.network.port", "4242", 5},
		{"tsd.network.bind", "0.0.0.0", 6},
		{"tsd.http.cachedir", "/tmp/tsd", 7},
		{"tsd.storage.hbase.zk_quorum", "localhost:2181", 8},
		{"tsd.http.request.cors_headers", "Authorization, Content-Type, Accept", 9},
		{"tsd.core.tag.allow_specialchars", "!#=: ", 12},
		{"key with=odd:chars", "v", 13},
		{"unicode", "étÉ 😀 \uFFFDx", 14},
		{"escapes", "a\tb\nc\\dqe", 15},
		{"empty", "", 16},
		{"trailing", "ends with backslash", 17},
	}
	got, err := parseProperties(src)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseProperties:\n got %+v\nwant %+v", got, want)
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	for src, want := range map[string]string{
		"a = 1\nb = \\u12\n":      `line 2: key "b": malformed \uxxxx escape`,
		"a = 1\n\nk\\uZZZZ = v\n": `line 3: malformed \uZZZZ escape`,
	} {
		_, err := parseProperties(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseProperties(%q) = %v, want error containing %q", src, err, want)
		}
	}
}

// formatProperty writes key and value so parseProperties reads them back
// exactly: the inverse the fuzz target checks against.
func formatProperty(key, value string) string {
	var b strings.Builder
	escapeProperty(&b, key, true)
	b.WriteString(" = ")
	escapeProperty(&b, value, false)
	b.WriteByte('\n')
	return b.String()
}

func escapeProperty(b *strings.Builder, s string, isKey bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '=' || c == ':' || c == '#' || c == '!':
			b.WriteString(`\` + string(c))
		case c == ' ' && (isKey || i == 0 || i == len(s)-1):
			b.WriteString(`\ `)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\f':
			b.WriteString(`\f`)
		default:
			b.WriteByte(c)
		}
	}
}

// FuzzParseProperties checks that any input parses or fails cleanly, that
// entries come in line order, and that re-encoding what was parsed reads
// back the same keys and values.
func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{
		"a = b\n", "# c\n! d\n", "k\\\n  v", "k = \\u00e9\\uD83D\\uDE00", "k : v \\ ", "=", "\\",
		"a\\ b=c\\=d\r\ne f\rg", "tsd.network.port = 4242\ntsd.http.cachedir = /tmp\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		props, err := parseProperties(src)
		if err != nil {
			return
		}
		var again strings.Builder
		for i, p := range props {
			if p.line < 1 || (i > 0 && p.line <= props[i-1].line) {
				t.Fatalf("line numbers out of order: %+v", props)
			}
			again.WriteString(formatProperty(p.key, p.value))
		}
		back, err := parseProperties(again.String())
		if err != nil {
			t.Fatalf("re-encoded %q fails: %v", again.String(), err)
		}
		for i := range props {
			if i >= len(back) || back[i].key != props[i].key || back[i].value != props[i].value {
				t.Fatalf("round trip of %q:\n got %+v\nwant %+v", src, back, props)
			}
		}
	})
}
