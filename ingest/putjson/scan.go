package putjson

import (
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of JSON values inside a data point.
const MaxDepth = 64

// Kinds of scalar a field holds.
const (
	kindNone   = iota // field absent
	kindString        // text is the unescaped string
	kindNumber        // text is the number as sent
	kindBool          // text is true or false
	kindNull
	kindComposite // an object or array (skipped)
)

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func (d *Decoder) skipSpace() {
	for d.pos < len(d.body) && isSpace(d.body[d.pos]) {
		d.pos++
	}
}

// peek returns the next non-space byte, or 0 at the end (a NUL byte in the
// body also reads 0; callers that must tell them apart check d.pos).
func (d *Decoder) peek() byte {
	d.skipSpace()
	if d.pos >= len(d.body) {
		return 0
	}
	return d.body[d.pos]
}

// fail records a syntax error at the current position and returns false.
func (d *Decoder) fail(msg string) bool {
	if d.err == nil {
		if d.rd.inElem && !d.rd.eof && d.pos+lookAhead > len(d.body) {
			d.err = errCut // parsed again with more of the stream
			return false
		}
		if d.pos >= len(d.body) {
			if d.rd.err != nil {
				// The body ended early because its read failed.
				d.err = d.rd.err
				return false
			}
			msg = "unexpected end of JSON: " + msg
		}
		d.err = &SyntaxError{Offset: d.offset(), Msg: msg}
	}
	return false
}

// expect consumes the byte c after optional spaces.
func (d *Decoder) expect(c byte, msg string) bool {
	if d.peek() != c {
		return d.fail(msg)
	}
	d.pos++
	return true
}

// str reads a string at d.pos (the opening quote) and returns its value:
// a slice of the body when it has no escapes, else of d.buf.
func (d *Decoder) str() ([]byte, bool) {
	b := d.body
	i := d.pos + 1
	for i < len(b) {
		c := b[i]
		if c == '"' {
			s := b[d.pos+1 : i]
			d.pos = i + 1
			return s, true
		}
		if c == '\\' {
			return d.strEscaped(i)
		}
		if c < 0x20 {
			d.pos = i
			return nil, d.fail("control character in string")
		}
		i++
	}
	d.pos = i
	return nil, d.fail("unterminated string")
}

// strEscaped finishes a string with escapes from b[i] (a backslash),
// unescaping into d.buf.
func (d *Decoder) strEscaped(i int) ([]byte, bool) {
	b := d.body
	off := len(d.buf)
	d.buf = append(d.buf, b[d.pos+1:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return d.buf[off:], true
		case c < 0x20:
			d.pos = i
			return nil, d.fail("control character in string")
		case c != '\\':
			d.buf = append(d.buf, c)
			i++
			continue
		}
		n, ok := d.escape(i)
		if !ok {
			return nil, false
		}
		i += n
	}
	d.pos = i
	return nil, d.fail("unterminated string")
}

var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape appends the character of the escape at body[i] and returns its
// length in the body.
func (d *Decoder) escape(i int) (int, bool) {
	b := d.body
	if i+1 >= len(b) {
		d.pos = len(b)
		return 0, d.fail("unterminated string")
	}
	if r := simpleEscapes[b[i+1]]; r != 0 {
		d.buf = append(d.buf, r)
		return 2, true
	}
	if b[i+1] != 'u' {
		d.pos = i
		return 0, d.fail("invalid escape in string")
	}
	r, ok := hex4(b, i+2)
	if !ok {
		d.pos = i
		return 0, d.fail("invalid \\u escape in string")
	}
	n := 6
	if utf16.IsSurrogate(r) {
		r2, ok := rune(0), false
		if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
			r2, ok = hex4(b, i+8)
		}
		if r = utf16.DecodeRune(r, r2); ok && r != utf8.RuneError {
			n = 12
		}
	}
	d.buf = utf8.AppendRune(d.buf, r)
	return n, true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a JSON number at d.pos and returns its text.
func (d *Decoder) number() ([]byte, bool) {
	b, start := d.body, d.pos
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		d.pos = i
		return nil, d.fail("invalid number")
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			d.pos = i + 1
			return nil, d.fail("invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			d.pos = i
			return nil, d.fail("invalid number")
		}
		i = j
	}
	d.pos = i
	return b[start:i], true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// literal reads true, false or null.
func (d *Decoder) literal() ([]byte, int, bool) {
	for _, l := range [...]struct {
		text string
		kind int
	}{{"true", kindBool}, {"false", kindBool}, {"null", kindNull}} {
		if end := d.pos + len(l.text); end <= len(d.body) && string(d.body[d.pos:end]) == l.text {
			s := d.body[d.pos:end]
			d.pos = end
			return s, l.kind, true
		}
	}
	return nil, 0, d.fail("invalid literal")
}

// scalar reads any value: a string, number or literal is returned with its
// kind; an object or array is skipped (kindComposite).
func (d *Decoder) scalar() ([]byte, int, bool) {
	switch c := d.peek(); {
	case c == '"':
		s, ok := d.str()
		return s, kindString, ok
	case c == '-' || c >= '0' && c <= '9':
		s, ok := d.number()
		return s, kindNumber, ok
	case c == '{' || c == '[':
		return nil, kindComposite, d.skipValue()
	case c == 0:
		return nil, 0, d.fail("expected a value")
	}
	return d.literal()
}

// skipValue skips one value of any kind without recursion, checking its
// syntax; nesting is bounded by MaxDepth.
func (d *Decoder) skipValue() bool {
	mark := len(d.buf) // skipped strings need no room once skipped
	defer func() { d.buf = d.buf[:mark] }()
	var stack uint64 // bit i set: level i is an object
	depth := 0
	for {
		// A value is expected here.
		switch c := d.peek(); c {
		case '{', '[':
			if depth == MaxDepth {
				return d.fail("JSON nested too deep")
			}
			d.pos++
			if c == '{' {
				stack |= 1 << depth
			} else {
				stack &^= 1 << depth
			}
			depth++
			if d.peek() == closer(c) {
				d.pos++
				depth--
			} else if c == '{' && !d.objectKey() {
				return false
			} else {
				continue
			}
		default:
			if _, _, ok := d.scalar(); !ok {
				return false
			}
		}
		// After a value: close levels or move to the next element.
		for {
			if depth == 0 {
				return true
			}
			obj := stack&(1<<(depth-1)) != 0
			c := d.peek()
			if c == ',' {
				d.pos++
				if obj && !d.objectKey() {
					return false
				}
				break
			}
			if (obj && c == '}') || (!obj && c == ']') {
				d.pos++
				depth--
				continue
			}
			if obj {
				return d.fail("expected ',' or '}' in object")
			}
			return d.fail("expected ',' or ']' in array")
		}
	}
}

func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// objectKey reads a key and its ':' (the key is discarded).
func (d *Decoder) objectKey() bool {
	if d.peek() != '"' {
		return d.fail("expected a string key in object")
	}
	mark := len(d.buf)
	_, ok := d.str()
	d.buf = d.buf[:mark]
	return ok && d.expect(':', "expected ':' after an object key")
}
