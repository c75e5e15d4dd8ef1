package gexp

import (
	"strings"

	"github.com/tsd-db/tsd/query/tsquery"
)

// maxDepth bounds nesting, so a hostile expression cannot exhaust the
// stack (OpenTSDB's recursive parser has no bound but the JVM's stack).
const maxDepth = 64

// Tree is one parsed expression: a function, its series parameters in
// order (metric sub-queries and nested expressions) and its bare
// arguments.
type Tree struct {
	Name   string
	fn     function
	op     setOp // set instead of fn for the arithmetic set functions
	params []param
	args   []string
	// gap is set when a bare argument comes before a series parameter:
	// OpenTSDB then finds no parameter at some position and fails.
	gap bool
}

// param is a metric sub-query (its index among the request's expression
// metrics) or a nested expression.
type param struct {
	sub    *Tree
	metric int
}

// Parse reads exprs, appending their metric sub-queries, in order, to
// metrics (OpenTSDB's Expressions.parseExpressions).
func Parse(exprs []string, metrics []string) ([]*Tree, []string, error) {
	var trees []*Tree
	for _, e := range exprs {
		p := &parser{s: e, metrics: metrics}
		t, err := p.expression(0)
		if err != nil {
			return nil, nil, err
		}
		metrics = p.metrics
		trees = append(trees, t)
	}
	return trees, metrics, nil
}

type parser struct {
	s       string
	pos     int
	metrics []string
}

func (p *parser) fail() error {
	return &tsquery.Error{Msg: "Failed to parse " + p.s}
}

// isNameByte reports whether c may be part of a NAME token.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("-_#/$@|.'[]", c) >= 0
}

func (p *parser) skip() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

// name reads a NAME token, or "" when none is next.
func (p *parser) name() string {
	p.skip()
	if p.pos < len(p.s) && p.s[p.pos] == '*' {
		p.pos++
		return "*"
	}
	start := p.pos
	for p.pos < len(p.s) && isNameByte(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

// peek returns the next non-blank byte, or 0 at the end.
func (p *parser) peek() byte {
	p.skip()
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

// eat consumes c if it is next.
func (p *parser) eat(c byte) bool {
	if p.peek() == c {
		p.pos++
		return true
	}
	return false
}

// expression reads NAME "(" param ("," param)* ")"; the function is
// looked up as soon as its name is read (ExpressionTree's constructor).
func (p *parser) expression(depth int) (*Tree, error) {
	if depth > maxDepth {
		return nil, p.fail()
	}
	name := p.name()
	if name == "" || !p.eat('(') {
		return nil, p.fail()
	}
	fn, ok := functions[name]
	op := setOps[name]
	if !ok && op == opNone {
		return nil, &tsquery.Error{Msg: "Function " + name + " has not been implemented"}
	}
	t := &Tree{Name: name, fn: fn, op: op}
	for {
		if err := p.param(t, depth); err != nil {
			return nil, err
		}
		if p.eat(')') {
			return t, nil
		}
		if !p.eat(',') {
			return nil, p.fail()
		}
	}
}

// param reads one parameter, choosing by what follows the first NAME as
// the generated parser's lookahead does.
func (p *parser) param(t *Tree, depth int) error {
	save := p.pos
	first := p.name()
	if first == "" {
		return p.fail()
	}
	switch p.peek() {
	case '(':
		p.pos = save
		sub, err := p.expression(depth + 1)
		if err != nil {
			return err
		}
		t.params = append(t.params, param{sub: sub, metric: -1})
	case ':':
		m, err := p.metric(first)
		if err != nil {
			return err
		}
		p.metrics = append(p.metrics, m)
		t.params = append(t.params, param{metric: len(p.metrics) - 1})
	default:
		t.args = append(t.args, first)
		return nil
	}
	if len(t.args) > 0 {
		t.gap = true
	}
	return nil
}

// metric reads agg:[interval:][rate:]metric[{k=v,...}] after its
// aggregator, rebuilt as an m= sub-query string.
func (p *parser) metric(agg string) (string, error) {
	parts := []string{agg}
	for len(parts) < 4 && p.eat(':') {
		n := p.name()
		if n == "" {
			return "", p.fail()
		}
		parts = append(parts, n)
	}
	if len(parts) < 2 || p.peek() == ':' {
		return "", p.fail()
	}
	m := strings.Join(parts, ":")
	if !p.eat('{') {
		return m, nil
	}
	var pairs []string
	for {
		k := p.name()
		if k == "" || !p.eat('=') {
			return "", p.fail()
		}
		v := p.name()
		if v == "" {
			return "", p.fail()
		}
		pairs = append(pairs, k+"="+v)
		if p.eat('}') {
			return m + "{" + strings.Join(pairs, ",") + "}", nil
		}
		if !p.eat(',') {
			return "", p.fail()
		}
	}
}
