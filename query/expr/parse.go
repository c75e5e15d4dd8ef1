package expr

import (
	"math"
	"strconv"
	"strings"
)

// node is a parsed expression: a number, a variable, a unary minus or a
// binary operator.
type node struct {
	op          byte // 0 number, 'v' variable, 'u' unary minus, or + - * / %
	num         float64
	name        string
	left, right *node
}

// maxDepth bounds nesting so a hostile expression cannot exhaust the stack.
const maxDepth = 200

// parseExpr reads an arithmetic expression over numbers and variable ids
// with + - * / %, unary minus and parentheses, the usual precedence, left
// associative.
func parseExpr(s string) (node, error) {
	if strings.TrimSpace(s) == "" {
		return node{}, bad("missing expression")
	}
	p := &parser{s: s}
	n, err := p.sum(0)
	if err != nil {
		return node{}, err
	}
	if p.skip(); p.i < len(p.s) {
		return node{}, p.fail("unexpected '" + string(p.s[p.i]) + "'")
	}
	return *n, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) fail(what string) error {
	return bad("Unable to parse expression [%s] at %d: %s", p.s, p.i, what)
}

func (p *parser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *parser) sum(depth int) (*node, error) {
	l, err := p.product(depth)
	for err == nil {
		p.skip()
		if p.i >= len(p.s) || (p.s[p.i] != '+' && p.s[p.i] != '-') {
			return l, nil
		}
		op := p.s[p.i]
		p.i++
		var r *node
		if r, err = p.product(depth); err == nil {
			l = &node{op: op, left: l, right: r}
		}
	}
	return nil, err
}

func (p *parser) product(depth int) (*node, error) {
	l, err := p.unary(depth)
	for err == nil {
		p.skip()
		if p.i >= len(p.s) || (p.s[p.i] != '*' && p.s[p.i] != '/' && p.s[p.i] != '%') {
			return l, nil
		}
		op := p.s[p.i]
		p.i++
		var r *node
		if r, err = p.unary(depth); err == nil {
			l = &node{op: op, left: l, right: r}
		}
	}
	return nil, err
}

func (p *parser) unary(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.fail("nested too deeply")
	}
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
		n, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &node{op: 'u', left: n}, nil
	}
	return p.primary(depth)
}

func (p *parser) primary(depth int) (*node, error) {
	p.skip()
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end")
	}
	c := rune(p.s[p.i])
	switch {
	case c == '(':
		p.i++
		n, err := p.sum(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.skip(); p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, p.fail("missing ')'")
		}
		p.i++
		return n, nil
	case isDigit(c) || c == '.':
		return p.number()
	case isLetter(c) || c == '_':
		start := p.i
		for p.i < len(p.s) && (isLetter(rune(p.s[p.i])) || isDigit(rune(p.s[p.i])) || p.s[p.i] == '_') {
			p.i++
		}
		return &node{op: 'v', name: p.s[start:p.i]}, nil
	}
	return nil, p.fail("unexpected '" + string(c) + "'")
}

func (p *parser) number() (*node, error) {
	start := p.i
	for p.i < len(p.s) && (isDigit(rune(p.s[p.i])) || p.s[p.i] == '.') {
		p.i++
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		for p.i < len(p.s) && isDigit(rune(p.s[p.i])) {
			p.i++
		}
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		p.i = start
		return nil, p.fail("bad number")
	}
	return &node{num: f}, nil
}

// variables appends the distinct variable names of n.
func (n *node) variables(dst []string) []string {
	switch n.op {
	case 'v':
		for _, v := range dst {
			if v == n.name {
				return dst
			}
		}
		return append(dst, n.name)
	case 0:
		return dst
	}
	dst = n.left.variables(dst)
	if n.right != nil {
		dst = n.right.variables(dst)
	}
	return dst
}

// eval computes n with the variables' values from get.
func (n *node) eval(get func(string) float64) float64 {
	switch n.op {
	case 0:
		return n.num
	case 'v':
		return get(n.name)
	case 'u':
		return -n.left.eval(get)
	}
	l, r := n.left.eval(get), n.right.eval(get)
	switch n.op {
	case '+':
		return l + r
	case '-':
		return l - r
	case '*':
		return l * r
	case '/':
		return l / r
	}
	return math.Mod(l, r)
}
