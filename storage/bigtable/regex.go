package bigtable

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"rsc.io/binaryregexp/syntax"

	"github.com/tsd-db/tsd/storage"
)

// rowRegex validates a contract row-key pattern and rewrites it into the
// form both Bigtable and its emulator read the same way.
//
// The contract reads the pattern as Latin-1 (each byte one character) and
// matches it against the whole key as raw bytes with "." matching any byte.
// Bigtable's RE2 works on raw bytes, but the emulator needs a UTF-8 pattern
// and rewrites bytes above 0x7f into \xNN escapes, which breaks them inside
// \Q...\E. So the pattern is parsed here (an invalid one is
// ErrInvalidArgument before any request), printed back in RE2 syntax with
// every character above 0x7f escaped as \x{NN}, made dot-all, and anchored
// at both ends: the result is pure ASCII and means the same to both servers.
func rowRegex(pattern string) (string, error) {
	re, err := syntax.Parse(latin1ToUTF8(pattern), syntax.Perl|syntax.DotNL)
	if err != nil {
		return "", storage.Invalidf("row regex %q: %v", pattern, err)
	}
	clipLatin1(re)
	s := strings.ReplaceAll(re.String(), noMatchClass, `[^\x00-\x{ff}]`)
	return `\A(?:` + escapeHigh(s) + `)\z`, nil
}

// noMatchClass is how the printer writes a class that matches nothing.
const noMatchClass = `[^\x00-\x{10FFFF}]`

// clipLatin1 drops every character above 0xff from re: no key byte can
// match one, and the Latin-1 RE2 of Bigtable need not accept them. A Unicode
// class such as \pL shrinks to its Latin-1 part, and a literal above 0xff
// becomes a class that matches nothing.
func clipLatin1(re *syntax.Regexp) {
	for _, sub := range re.Sub {
		clipLatin1(sub)
	}
	switch re.Op {
	case syntax.OpCharClass:
		out := re.Rune[:0]
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if lo := re.Rune[i]; lo <= 0xff {
				out = append(out, lo, min(re.Rune[i+1], 0xff))
			}
		}
		re.Rune = out
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r > 0xff {
				re.Op, re.Rune, re.Flags = syntax.OpCharClass, nil, re.Flags&^syntax.FoldCase
				return
			}
		}
	}
}

// latin1ToUTF8 maps each byte of s to the rune of the same value.
func latin1ToUTF8(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return latin1Slow(s)
		}
	}
	return s
}

func latin1Slow(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 2)
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// escapeHigh replaces every non-ASCII character of a printed pattern with
// \x{NN}; the escape means the same in a literal and in a class.
func escapeHigh(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\x{%x}`, r)
	}
	return b.String()
}
