package tsquery

import (
	"regexp"
	"strings"
)

// Matcher decides whether a series' tag value passes a filter.
type Matcher struct {
	typ       string
	set       map[string]struct{} // literal types
	lower     bool                // compare lower-cased
	parts     []string            // wildcard components between the '*'s
	anyValue  bool                // wildcard "*": any value, tag present
	starStart bool                // wildcard starts with '*'
	starEnd   bool                // wildcard ends with '*'
	re        *regexp.Regexp
}

// Compile validates f and returns its matcher.
func (f Filter) Compile() (*Matcher, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	m := &Matcher{typ: f.Type}
	switch f.Type {
	case LiteralOr, ILiteralOr, NotLiteralOr, NotILiteralOr:
		m.lower = f.Type == ILiteralOr || f.Type == NotILiteralOr
		m.set = map[string]struct{}{}
		for _, l := range literals(f) {
			m.set[l] = struct{}{}
		}
	case Wildcard, IWildcard:
		m.compileWildcard(f)
	case Regexp:
		m.re = regexp.MustCompile(f.Filter) // Validate compiled it
	}
	return m, nil
}

func (m *Matcher) compileWildcard(f Filter) {
	expr := f.Filter
	if m.lower = f.Type == IWildcard; m.lower {
		expr = strings.ToLower(expr)
	}
	m.starStart = strings.HasPrefix(expr, "*")
	m.starEnd = strings.HasSuffix(expr, "*")
	m.parts = strings.FieldsFunc(expr, func(r rune) bool { return r == '*' })
	m.anyValue = len(m.parts) == 0
}

// Match reports whether a series passes: v is its value for the filter's
// tag key and present says whether it has that key at all. Only the not_*
// filters pass a series without the key.
func (m *Matcher) Match(v string, present bool) bool {
	switch m.typ {
	case NotKey:
		return !present
	case NotLiteralOr, NotILiteralOr:
		return !present || !m.inSet(v)
	}
	if !present {
		return false
	}
	switch m.typ {
	case LiteralOr, ILiteralOr:
		return m.inSet(v)
	case Regexp:
		return m.re.MatchString(v) // unanchored, like Java's find()
	}
	return m.glob(v)
}

func (m *Matcher) inSet(v string) bool {
	if m.lower {
		v = strings.ToLower(v)
	}
	_, ok := m.set[v]
	return ok
}

// glob matches the wildcard as OpenTSDB's TagVWildcardFilter does: "web*"
// needs the prefix, "*.lga" the suffix, and every pattern needs its parts
// in order; a pattern with a '*' only inside ("a*b") or at both ends is not
// anchored at either end.
func (m *Matcher) glob(v string) bool {
	if m.anyValue {
		return true
	}
	if m.lower {
		v = strings.ToLower(v)
	}
	first, last := m.parts[0], m.parts[len(m.parts)-1]
	if m.starEnd && !m.starStart && !strings.HasPrefix(v, first) {
		return false
	}
	if m.starStart && !m.starEnd && !strings.HasSuffix(v, last) {
		return false
	}
	rest := v
	for _, p := range m.parts {
		k := strings.Index(rest, p)
		if k < 0 {
			return false
		}
		rest = rest[k+len(p):]
	}
	return true
}
