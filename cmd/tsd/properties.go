package main

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// property is one key = value entry of a properties file.
type property struct {
	key, value string
	line       int // first physical line of the entry, 1-based
}

// parseProperties reads the Java properties format OpenTSDB's opentsdb.conf
// uses: one "key = value" (or "key: value", or "key value") per line;
// lines whose first non-blank character is # or ! are comments; blank
// lines are skipped; a line ending in an odd number of backslashes
// continues on the next, whose leading blanks are dropped; blanks around
// the key and value are trimmed; escapes \t \n \r \f \uXXXX and \<c> (for
// any other c, so \= \: \# \! \<space> keep those characters) are decoded
// in keys and values. Text is read as UTF-8, not Java's Latin-1. A later
// entry for the same key wins when applied.
func parseProperties(src string) ([]property, error) {
	var out []property
	lines := splitLines(src)
	for i := 0; i < len(lines); i++ {
		start := i
		l := trimLeftBlank(lines[i])
		if l == "" || l[0] == '#' || l[0] == '!' {
			continue
		}
		for continues(l) && i+1 < len(lines) {
			i++
			l = l[:len(l)-1] + trimLeftBlank(lines[i])
		}
		if continues(l) {
			l = l[:len(l)-1] // a continuation at end of file continues into nothing
		}
		p, err := parsePropertyLine(l)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", start+1, err)
		}
		p.line = start + 1
		out = append(out, p)
	}
	return out, nil
}

// parsePropertyLine splits one logical line, already left-trimmed, into
// its key and value.
func parsePropertyLine(l string) (property, error) {
	i := 0
	for i < len(l) && !strings.ContainsRune("=: \t\f", rune(l[i])) {
		if l[i] == '\\' {
			i++
		}
		i++
	}
	i = min(i, len(l))
	rawKey, rest := l[:i], trimLeftBlank(l[i:])
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = trimLeftBlank(rest[1:])
	}
	key, err := unescapeProperty(rawKey)
	if err != nil {
		return property{}, err
	}
	value, err := unescapeProperty(trimRightBlank(rest))
	if err != nil {
		return property{}, fmt.Errorf("key %q: %w", key, err)
	}
	return property{key: key, value: value}, nil
}

// splitLines splits on \n, \r\n and \r, as Java's LineReader does.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeftBlank(s string) string {
	for s != "" && isBlank(s[0]) {
		s = s[1:]
	}
	return s
}

// trimRightBlank drops trailing blanks that are not escaped.
func trimRightBlank(s string) string {
	for s != "" && isBlank(s[len(s)-1]) && !escapedAt(s, len(s)-1) {
		s = s[:len(s)-1]
	}
	return s
}

// continues reports whether l ends in an unescaped backslash.
func continues(l string) bool {
	return l != "" && l[len(l)-1] == '\\' && !escapedAt(l, len(l)-1)
}

// escapedAt reports whether s[i] follows an odd run of backslashes.
func escapedAt(s string, i int) bool {
	n := 0
	for i > 0 && s[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// unescapeProperty decodes the backslash escapes of a key or value.
func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	var units []uint16 // pending \u escapes, so surrogate pairs combine
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			flushUTF16(&b, &units)
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			break // a lone trailing backslash is dropped, as Java does
		}
		i++
		if s[i] == 'u' {
			u, err := parseHex4(s[i+1:])
			if err != nil {
				return "", err
			}
			units = append(units, u)
			i += 4
			continue
		}
		flushUTF16(&b, &units)
		b.WriteByte(unescapeByte(s[i]))
	}
	flushUTF16(&b, &units)
	return b.String(), nil
}

func unescapeByte(c byte) byte {
	switch c {
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	}
	return c
}

// parseHex4 reads the four hex digits of a \u escape.
func parseHex4(s string) (uint16, error) {
	if len(s) < 4 {
		return 0, fmt.Errorf(`malformed \uxxxx escape: want 4 hex digits`)
	}
	var u uint16
	for _, c := range []byte(s[:4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, fmt.Errorf(`malformed \u%s escape: want 4 hex digits`, s[:4])
		}
		u = u<<4 | uint16(d)
	}
	return u, nil
}

// flushUTF16 writes pending \u code units as UTF-8; a lone surrogate
// becomes U+FFFD.
func flushUTF16(b *strings.Builder, units *[]uint16) {
	for _, r := range utf16.Decode(*units) {
		var buf [utf8.UTFMax]byte
		b.Write(utf8.AppendRune(buf[:0], r))
	}
	*units = (*units)[:0]
}
