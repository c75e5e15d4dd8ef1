package index

import (
	"regexp/syntax"
	"unicode/utf8"
)

// maxSetMatches bounds the names setMatches expands a PromQL expression
// into; an expression with more is matched against the values instead.
const maxSetMatches = 256

// setMatches returns the finite set of values the anchored PromQL
// expression pattern (=~ and !~ match "^(?:pattern)$") matches, when it
// is one: literals, alternations, concatenations and small character
// classes of them, as Grafana writes a multi-value variable
// (host=~"(web1|web2)"). A filter with such a set looks each name up
// instead of compiling the expression and running it over every value of
// the tag. ok is false for anything else (case folding, repetition, any
// character, an anchor inside), and for sets beyond maxSetMatches; the
// caller then compiles the expression. The set may hold duplicates and
// "", which the whole-value match of an absent label sees.
func setMatches(pattern string) (set []string, ok bool) {
	re, err := syntax.Parse("^(?:"+pattern+")$", syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return nil, false
	}
	n := len(re.Sub)
	if re.Sub[0].Op != syntax.OpBeginText || re.Sub[n-1].Op != syntax.OpEndText {
		return nil, false
	}
	return expandConcat(re.Sub[1 : n-1])
}

// expand returns the strings re matches whole, if they are few.
func expand(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || hasRuneError(re.Rune) {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCharClass:
		return expandClass(re.Rune)
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpConcat:
		return expandConcat(re.Sub)
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			set, ok := expand(s)
			if !ok || len(out)+len(set) > maxSetMatches {
				return nil, false
			}
			out = append(out, set...)
		}
		return out, true
	}
	return nil, false
}

// expandConcat returns every concatenation of the subexpressions' sets.
func expandConcat(subs []*syntax.Regexp) ([]string, bool) {
	out := []string{""}
	for _, s := range subs {
		set, ok := expand(s)
		if !ok || len(out)*len(set) > maxSetMatches {
			return nil, false
		}
		next := make([]string, 0, len(out)*len(set))
		for _, prefix := range out {
			for _, suffix := range set {
				next = append(next, prefix+suffix)
			}
		}
		out = next
	}
	return out, true
}

// expandClass returns the runes of a class given as ranges lo, hi, ....
func expandClass(ranges []rune) ([]string, bool) {
	var out []string
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if int(hi-lo)+1 > maxSetMatches-len(out) {
			return nil, false
		}
		for r := lo; r <= hi; r++ {
			if r == utf8.RuneError {
				return nil, false
			}
			out = append(out, string(r))
		}
	}
	return out, len(out) > 0
}

// hasRuneError reports U+FFFD in a literal: the compiled expression
// matches it against any invalid UTF-8 byte of a value, which a set of
// names cannot do.
func hasRuneError(rs []rune) bool {
	for _, r := range rs {
		if r == utf8.RuneError {
			return true
		}
	}
	return false
}
