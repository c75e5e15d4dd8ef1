package index

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tsd-db/tsd/uid"
)

// FilterType is how a Filter matches a tag's values.
type FilterType uint8

// OpenTSDB's tag-value filters (src/query/filter/), then PromQL's label
// matchers.
const (
	// LiteralOr: the tag is present and its value is one of Values.
	LiteralOr FilterType = iota + 1
	// ILiteralOr is LiteralOr ignoring case (both sides lower-cased).
	ILiteralOr
	// NotLiteralOr: the tag is absent or its value is none of Values.
	NotLiteralOr
	// NotILiteralOr is NotLiteralOr ignoring case.
	NotILiteralOr
	// Wildcard: the tag is present and its value matches the glob Pattern,
	// where * matches any run of characters; "*" alone matches any value.
	Wildcard
	// IWildcard is Wildcard ignoring case.
	IWildcard
	// Regexp: the tag is present and the RE2 expression Pattern matches
	// somewhere in its value (Java's find, not a whole-value match).
	Regexp
	// NotKey: the series does not have the tag.
	NotKey
	// Equal is PromQL's =: the value equals Pattern; Pattern "" means the
	// label is absent.
	Equal
	// NotEqual is PromQL's !=: the value (absent counts as "") is not
	// Pattern.
	NotEqual
	// RegexMatch is PromQL's =~: the whole value (absent counts as "")
	// matches the RE2 expression Pattern.
	RegexMatch
	// RegexNoMatch is PromQL's !~, the complement of RegexMatch.
	RegexNoMatch
)

var filterNames = [...]string{
	LiteralOr: "literal_or", ILiteralOr: "iliteral_or", NotLiteralOr: "not_literal_or",
	NotILiteralOr: "not_iliteral_or", Wildcard: "wildcard", IWildcard: "iwildcard",
	Regexp: "regexp", NotKey: "not_key", Equal: "=", NotEqual: "!=", RegexMatch: "=~", RegexNoMatch: "!~",
}

// String returns OpenTSDB's name of the type, or PromQL's operator.
func (t FilterType) String() string {
	if int(t) < len(filterNames) && filterNames[t] != "" {
		return filterNames[t]
	}
	return fmt.Sprintf("FilterType(%d)", uint8(t))
}

// ParseFilterType accepts OpenTSDB's filter names (as /api/config/filters
// lists them) and PromQL's four operators.
func ParseFilterType(name string) (FilterType, error) {
	if i := slices.Index(filterNames[:], name); i > 0 {
		return FilterType(i), nil
	}
	return 0, fmt.Errorf("%w: unknown filter type %q", ErrBadFilter, name)
}

// Filter selects series by one tag. Filters of a query are ANDed.
type Filter struct {
	// TagK is the tag key's UID, or NameKey to match metric names.
	TagK uid.ID
	// Type is how values are matched.
	Type FilterType
	// Values are the literals of the literal_or types (OpenTSDB's filter
	// string split on '|').
	Values []string
	// Pattern is the wildcard or expression, or the value of Equal and
	// NotEqual.
	Pattern string
	// GroupBy is the planner's business; the index ignores it.
	GroupBy bool
}

// Validate reports a filter that cannot be compiled, as Postings would.
func (f *Filter) Validate() error {
	_, err := compile(0, f)
	return err
}

// compiled is a filter reduced to set operations: M is the series whose
// value is in the selected set (every value when key), has the series
// having the tag at all. A positive filter keeps M (and, with absent, the
// series without the tag); a negative one removes M (and, with absent, the
// series without the tag).
type compiled struct {
	f        *Filter
	neg      bool
	key      bool
	absent   bool
	literals []string          // exact names, resolved with Lookup
	match    func(string) bool // a predicate over every value of the key
}

func compile(i int, f *Filter) (compiled, error) {
	c := compiled{f: f}
	bad := func(reason string) (compiled, error) {
		return c, &FilterError{Index: i, Filter: fmt.Sprintf("%s(%s%s)", f.Type, f.Pattern, strings.Join(f.Values, "|")), Reason: reason}
	}
	switch f.Type {
	case LiteralOr, NotLiteralOr:
		c.neg, c.literals = f.Type == NotLiteralOr, f.Values
	case ILiteralOr, NotILiteralOr:
		c.neg, c.match = f.Type == NotILiteralOr, foldedIn(f.Values)
	case Wildcard, IWildcard:
		if !strings.Contains(f.Pattern, "*") {
			return bad("a wildcard must contain an asterisk")
		}
		c.key = strings.Trim(f.Pattern, "*") == ""
		c.match = newGlob(f.Pattern, f.Type == IWildcard).match
	case Regexp:
		re, err := regexp.Compile(f.Pattern)
		if err != nil {
			return bad(err.Error())
		}
		c.match = re.MatchString
	case NotKey:
		c.neg, c.key = true, true
	case Equal, NotEqual:
		c.neg = f.Type == NotEqual
		if f.Pattern == "" {
			c.neg, c.key = !c.neg, true
		} else {
			c.literals = []string{f.Pattern}
		}
	case RegexMatch, RegexNoMatch:
		return compileProm(c, f, bad)
	default:
		return bad("unknown filter type")
	}
	return c, nil
}

// compileProm compiles =~ and !~: anchored at both ends, and matching the
// absent value "" when the expression matches the empty string. An
// expression that matches a few names only (setMatches) becomes those
// literals, looked up rather than matched against every value. What an
// expression compiles to is kept (promCache): a dashboard sends the same
// few expressions at every refresh, and a query's filters are checked
// before they are run.
func compileProm(c compiled, f *Filter, bad func(string) (compiled, error)) (compiled, error) {
	c.neg = f.Type == RegexNoMatch
	p, ok := promCache.get(f.Pattern)
	if !ok {
		var err error
		if p, err = compilePattern(f.Pattern); err != nil {
			return bad(err.Error())
		}
		promCache.put(f.Pattern, p)
	}
	c.literals, c.absent, c.key, c.match = p.literals, p.absent, p.key, p.match
	return c, nil
}

// promPattern is what a =~ expression compiles to; literals are shared and
// read only.
type promPattern struct {
	literals    []string
	absent, key bool
	match       func(string) bool
}

func compilePattern(pattern string) (promPattern, error) {
	var p promPattern
	if set, ok := setMatches(pattern); ok {
		p.literals = make([]string, 0, len(set))
		for _, v := range set {
			if v == "" {
				p.absent = true // tag values are never empty
			} else {
				p.literals = append(p.literals, v)
			}
		}
		return p, nil
	}
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		return p, err
	}
	p.absent = re.MatchString("")
	switch prefix, complete := re.LiteralPrefix(); {
	case pattern == ".+" || pattern == ".*":
		p.key = true // with absent for .*: every series
	case complete && prefix != "":
		p.literals = []string{prefix}
	default:
		p.match = re.MatchString // a *regexp.Regexp is safe for concurrent use
	}
	return p, nil
}

// promCacheSize bounds promCache; it is emptied when full.
const promCacheSize = 1024

// promCache holds compiled =~ expressions by pattern, for every Index.
var promCache = patternCache{m: make(map[string]promPattern)}

type patternCache struct {
	mu sync.Mutex
	m  map[string]promPattern
}

func (pc *patternCache) get(pattern string) (promPattern, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	p, ok := pc.m[pattern]
	return p, ok
}

func (pc *patternCache) put(pattern string, p promPattern) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.m) >= promCacheSize {
		clear(pc.m)
	}
	pc.m[pattern] = p
}

// foldedIn returns a predicate true for values equal to one of lits after
// lower-casing both, as OpenTSDB does.
func foldedIn(lits []string) func(string) bool {
	set := make(map[string]struct{}, len(lits))
	for _, l := range lits {
		set[strings.ToLower(l)] = struct{}{}
	}
	return func(v string) bool {
		_, ok := set[strings.ToLower(v)]
		return ok
	}
}

// glob is a wildcard pattern split at its asterisks, matched as OpenTSDB's
// TagVWildcardFilter matches: "web*" needs the prefix and "*.lga" the
// suffix, but a pattern with asterisks only inside ("web*lga") or at both
// ends ("*web*") is anchored at neither end; every piece must occur, in
// order.
type glob struct {
	parts      []string // non-empty pieces between asterisks
	start, end bool     // the first (last) piece is anchored at the start (end)
	fold       bool
}

func newGlob(pattern string, fold bool) glob {
	if fold {
		pattern = strings.ToLower(pattern)
	}
	lead, trail := strings.HasPrefix(pattern, "*"), strings.HasSuffix(pattern, "*")
	g := glob{start: trail && !lead, end: lead && !trail, fold: fold}
	for _, p := range strings.Split(pattern, "*") {
		if p != "" {
			g.parts = append(g.parts, p)
		}
	}
	return g
}

// match reports whether v matches: the anchored pieces at the ends, the
// others in order, without overlapping, in between.
func (g glob) match(v string) bool {
	if g.fold {
		v = strings.ToLower(v)
	}
	parts := g.parts
	if g.start && len(parts) > 0 {
		if !strings.HasPrefix(v, parts[0]) {
			return false
		}
		v, parts = v[len(parts[0]):], parts[1:]
	}
	if g.end && len(parts) > 0 {
		last := parts[len(parts)-1]
		if !strings.HasSuffix(v, last) {
			return false
		}
		v, parts = v[:len(v)-len(last)], parts[:len(parts)-1]
	}
	for _, p := range parts {
		i := strings.Index(v, p)
		if i < 0 {
			return false
		}
		v = v[i+len(p):]
	}
	return true
}
