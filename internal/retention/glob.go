package retention

import (
	"errors"
	"strings"
)

// glob is a compiled pattern: the literal runs between its stars. A
// pattern without a star is one literal that must equal the name.
type glob struct {
	parts []string // unescaped literals between stars
	star  bool     // the pattern has at least one star
}

// compileGlob splits pattern at its unescaped stars.
func compileGlob(pattern string) (glob, error) {
	if pattern == "" {
		return glob{}, errors.New("empty pattern (use * to match every metric)")
	}
	var g glob
	var lit strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '\\':
			if i+1 == len(pattern) {
				return glob{}, errors.New("pattern ends with a lone backslash")
			}
			i++
			lit.WriteByte(pattern[i])
		case '*':
			g.parts = append(g.parts, lit.String())
			lit.Reset()
			g.star = true
		default:
			lit.WriteByte(c)
		}
	}
	g.parts = append(g.parts, lit.String())
	return g, nil
}

// match reports whether the whole of name matches: the first literal is a
// prefix, the last a suffix, and the ones between occur in order, each as
// early as possible (which is optimal for stars that match any run).
func (g *glob) match(name string) bool {
	if !g.star {
		return name == g.parts[0]
	}
	first, last := g.parts[0], g.parts[len(g.parts)-1]
	if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
		return false
	}
	rest := name[len(first) : len(name)-len(last)]
	for _, p := range g.parts[1 : len(g.parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// Match reports whether name matches the glob pattern (tsd.storage.retention's
// syntax: `*` matches any run of characters, a backslash escapes). A pattern
// that does not compile matches nothing.
func Match(pattern, name string) bool {
	g, err := compileGlob(pattern)
	return err == nil && g.match(name)
}
