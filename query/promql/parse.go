package promql

import (
	"container/list"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/strutil"
)

// DefaultMatcherCacheBytes is the default budget of a Parser's kept
// regex matchers, counted as matcherCost estimates them.
const DefaultMatcherCacheBytes = 4 << 20

// Bounds of what a Parser keeps (see Parser).
const (
	// minKeptToken is the shortest regex token, quotes included, worth
	// keeping: the placeholder that stands for it needs its quotes, a
	// mark and an index.
	minKeptToken = 8
	// maxKeptValue is the longest regex kept; a longer one is compiled
	// by each parse, as Prometheus does.
	maxKeptValue = 4 << 10
	// placeholderMark starts every placeholder's value. A query holding
	// it anywhere is parsed as Prometheus parses it.
	placeholderMark = '\x01'
	// regexMeta are the characters that make a regex more than literals
	// joined by |, which Prometheus matches without compiling anything.
	regexMeta = `\.+*?()[]{}^$`
)

// Parser parses PromQL exactly as prometheus/promql/parser.ParseExpr does,
// but keeps the regex matchers it compiles, so that a query asked again
// with other equality matchers or another range (a Grafana panel's
// refresh, TSBS's queries, which pick other hosts each time) compiles
// none. A regex such as TSBS's cpu_(usage_user|…) costs 50 µs and 30 KB
// to compile, as much as the rest of the parse.
//
// Prometheus's parser compiles each matcher as it builds it and takes no
// cache, so Parser parses a copy of the query whose kept regex tokens are
// replaced by placeholders of the same length: plain literals, cheap to
// build, whose byte offsets leave every position in the tree as the
// query's own. It then swaps the kept matchers in. Whatever it cannot
// vouch for (a parse error, a regex that fails to compile, a matcher whose
// answer on "" differs from its placeholder's, which the parser checks) is
// parsed again from the query itself, so errors are Prometheus's own.
//
// A Parser is safe for concurrent use. Kept matchers are shared by the
// trees it returns; a labels.Matcher is never changed once built.
type Parser struct {
	mu      sync.Mutex
	max     int
	size    int
	entries map[matcherKey]*list.Element // of *keptMatcher
	lru     list.List                    // most recently used first
}

type matcherKey struct {
	typ         labels.MatchType
	name, value string
}

type keptMatcher struct {
	key  matcherKey
	m    *labels.Matcher
	cost int
}

// NewParser returns a Parser keeping regex matchers up to maxBytes
// (DefaultMatcherCacheBytes when 0 or less).
func NewParser(maxBytes int) *Parser {
	if maxBytes <= 0 {
		maxBytes = DefaultMatcherCacheBytes
	}
	return &Parser{max: maxBytes, entries: make(map[matcherKey]*list.Element)}
}

// ParseExpr parses qs as parser.ParseExpr does: the same tree, positions
// and errors.
func (p *Parser) ParseExpr(qs string) (parser.Expr, error) {
	if p == nil || !hasCompiledRegex(qs) || strings.IndexByte(qs, placeholderMark) >= 0 {
		return parser.ParseExpr(qs)
	}
	held, values := placehold(qs)
	if values == nil {
		return parser.ParseExpr(qs)
	}
	expr, err := parser.ParseExpr(held)
	if err != nil || !p.swap(expr, values) {
		return parser.ParseExpr(qs)
	}
	return expr, nil
}

// hasCompiledRegex reports whether qs seems to hold a regex matcher that
// Prometheus compiles: a quoted string after =~ or !~ with a character of
// regexMeta. It only spares the lexing of queries whose regexes are plain
// literals joined by |, such as a Grafana variable's hosts; placehold
// decides from the tokens.
func hasCompiledRegex(qs string) bool {
	for {
		i := strings.IndexByte(qs, '~')
		if i < 0 {
			return false
		}
		qs = strings.TrimLeft(qs[i+1:], " \t\r\n")
		if qs == "" {
			return false
		}
		quote, end := qs[0], len(qs)
		for j := 1; j < len(qs); j++ {
			if qs[j] == '\\' && quote != '`' {
				j++
			} else if qs[j] == quote {
				end = j
				break
			}
		}
		if strings.ContainsAny(qs[1:end], regexMeta) {
			return true
		}
		if end == len(qs) {
			return false
		}
		qs = qs[end+1:]
	}
}

// placehold returns qs with each regex token worth keeping replaced by a
// placeholder of its length, and the tokens' values by placeholder index;
// nil values when there is none.
func placehold(qs string) (string, []string) {
	var (
		b      []byte
		values []string
		it     parser.Item
		prev   parser.ItemType
	)
	l := parser.Lex(qs)
	for {
		l.NextItem(&it)
		if it.Typ == parser.EOF || it.Typ == parser.ERROR {
			break
		}
		isRegex := prev == parser.EQL_REGEX || prev == parser.NEQ_REGEX
		prev = it.Typ
		if !isRegex || it.Typ != parser.STRING || len(it.Val) < minKeptToken {
			continue
		}
		v, err := strutil.Unquote(it.Val)
		if err != nil || len(v) > maxKeptValue || !strings.ContainsAny(v, regexMeta) {
			continue
		}
		ph := placeholder(len(values), len(it.Val))
		if ph == "" {
			continue
		}
		if b == nil {
			b = []byte(qs)
		}
		copy(b[it.Pos:], ph)
		values = append(values, v)
	}
	if values == nil {
		return qs, nil
	}
	return string(b), values
}

// placeholder is the quoted literal standing for regex token i, n bytes
// long with its quotes: the mark, i, and filler. "" when i does not fit.
func placeholder(i, n int) string {
	idx := strconv.Itoa(i)
	if 3+len(idx) > n {
		return ""
	}
	return `"` + string(rune(placeholderMark)) + idx + strings.Repeat(string(rune(placeholderMark)), n-3-len(idx)) + `"`
}

// placeheldIndex is the token index a matcher value stands for, -1 when
// it is no placeholder.
func placeheldIndex(v string) int {
	if len(v) < 2 || v[0] != placeholderMark {
		return -1
	}
	i, err := strconv.Atoi(strings.TrimRight(v[1:], string(rune(placeholderMark))))
	if err != nil {
		return -1
	}
	return i
}

// swap replaces each placeholder matcher in expr by the kept matcher of
// its value, compiled on first use. It reports false when the tree
// cannot stand for the query's own parse: a placeholder missing or seen
// twice, a regex that does not compile, or one whose answer on "" (which
// the parser checks of every selector) differs from its placeholder's.
func (p *Parser) swap(expr parser.Expr, values []string) bool {
	seen := make([]bool, len(values))
	ok := true
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		vs, isSelector := n.(*parser.VectorSelector)
		if !isSelector {
			return nil
		}
		for j, m := range vs.LabelMatchers {
			i := placeheldIndex(m.Value)
			if i < 0 {
				continue
			}
			if i >= len(values) || seen[i] {
				ok = false
				return nil
			}
			seen[i] = true
			kept := p.matcher(m.Type, m.Name, values[i])
			if kept == nil || kept.Matches("") != m.Matches("") {
				ok = false
				return nil
			}
			vs.LabelMatchers[j] = kept
		}
		return nil
	})
	for _, s := range seen {
		ok = ok && s
	}
	return ok
}

// matcher returns the kept matcher of (typ, name, value), built and kept
// on a miss; nil when it does not compile.
func (p *Parser) matcher(typ labels.MatchType, name, value string) *labels.Matcher {
	k := matcherKey{typ, name, value}
	p.mu.Lock()
	if e, ok := p.entries[k]; ok {
		p.lru.MoveToFront(e)
		m := e.Value.(*keptMatcher).m
		p.mu.Unlock()
		return m
	}
	p.mu.Unlock()
	m, err := labels.NewMatcher(typ, name, value)
	if err != nil {
		return nil
	}
	p.keep(&keptMatcher{key: k, m: m, cost: matcherCost(name, value)})
	return m
}

// keep adds km, dropping the least recently used matchers over budget.
// A matcher built by two parses at once is kept once.
func (p *Parser) keep(km *keptMatcher) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.entries[km.key]; ok || km.cost > p.max {
		return
	}
	p.entries[km.key] = p.lru.PushFront(km)
	p.size += km.cost
	for p.size > p.max {
		e := p.lru.Back()
		old := e.Value.(*keptMatcher)
		p.lru.Remove(e)
		delete(p.entries, old.key)
		p.size -= old.cost
	}
}

// matcherCost over-estimates the heap a compiled matcher holds: measured
// at 2-5 KB for TSBS's regexes and up to 150 bytes per byte of a long
// nested one.
func matcherCost(name, value string) int {
	return 2<<10 + len(name) + 160*len(value)
}

// kept reports the matchers kept and their estimated bytes.
func (p *Parser) kept() (n, bytes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries), p.size
}
