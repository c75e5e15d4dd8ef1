package jsonw

import "unicode/utf8"

// Mode is a way of escaping strings; see the package doc.
type Mode uint8

// The modes.
const (
	JSON Mode = iota
	Jackson
	HTML
	numModes
)

// escapes[m][c] is how mode m writes the ASCII byte c: 0 as itself, 'u' as
// \u00xx, any other byte b as a backslash and b.
var escapes = [numModes][utf8.RuneSelf]byte{
	JSON:    escapeTable(false, false),
	Jackson: escapeTable(true, false),
	HTML:    escapeTable(false, true),
}

func escapeTable(shortBF, html bool) (t [utf8.RuneSelf]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['"'], t['\\'] = '"', '\\'
	t['\n'], t['\r'], t['\t'] = 'n', 'r', 't'
	if shortBF {
		t['\b'], t['\f'] = 'b', 'f'
	}
	if html {
		t['<'], t['>'], t['&'] = 'u', 'u', 'u'
	}
	return t
}

// hexDigits are the \u escape's digits of each mode.
var hexDigits = [numModes]string{
	JSON:    "0123456789abcdef",
	Jackson: "0123456789ABCDEF",
	HTML:    "0123456789abcdef",
}

// AppendString appends s as a JSON string escaped as m escapes it.
func (m Mode) AppendString(dst []byte, s string) []byte { return appendString(dst, s, m) }

// AppendBytes is AppendString for bytes.
func (m Mode) AppendBytes(dst, s []byte) []byte { return appendString(dst, s, m) }

// appendString copies the runs of bytes that need no escape whole and
// escapes the rest.
func appendString[S string | []byte](dst []byte, s S, m Mode) []byte {
	esc, hex := &escapes[m], hexDigits[m]
	dst = append(dst, '"')
	run := 0 // where the bytes not yet appended begin
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			e := esc[c]
			if e == 0 {
				i++
				continue
			}
			dst = append(dst, s[run:i]...)
			if e == 'u' {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				dst = append(dst, '\\', e)
			}
			i++
			run = i
			continue
		}
		// At most utf8.UTFMax bytes: a []byte's conversion stays on the
		// stack, a string's is free.
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[run:i]...)
			if m == HTML {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, "\uFFFD"...)
			}
		case m == HTML && (r == '\u2028' || r == '\u2029'):
			dst = append(dst, s[run:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += n
			continue
		}
		i += n
		run = i
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}
