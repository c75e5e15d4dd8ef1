package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// graphMarker precedes, in docs/architecture.md, the fenced block that
// draws the package graph one entry a line:
//
//	PKG [(planned)] ───► TARGET, TARGET, ... [(a note)]
//
// where the targets may instead be "stdlib only", "nothing" or "anything".
const graphMarker = "<!-- the import-rule test (internal/lint) reads the next block -->"

// parseDocGraph reads the graph block of an architecture document.
func parseDocGraph(doc string) ([]entry, error) {
	_, rest, ok := strings.Cut(doc, graphMarker)
	if !ok {
		return nil, fmt.Errorf("no line %q", graphMarker)
	}
	lines := strings.Split(strings.TrimLeft(rest, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "```") {
		return nil, fmt.Errorf("no fenced block after %q", graphMarker)
	}
	var out []entry
	for i, line := range lines[1:] {
		if strings.HasPrefix(line, "```") {
			return out, nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		e, err := parseDocEntry(line)
		if err != nil {
			return nil, fmt.Errorf("graph line %d %q: %w", i+1, line, err)
		}
		out = append(out, e)
	}
	return nil, fmt.Errorf("the graph block after %q is not closed", graphMarker)
}

// parseDocEntry reads one line of the graph block.
func parseDocEntry(line string) (entry, error) {
	left, right, ok := strings.Cut(line, "►")
	if !ok {
		return entry{}, fmt.Errorf("no arrow ►")
	}
	var e entry
	left = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(left), "─"))
	if pkg, ok := strings.CutSuffix(left, "(planned)"); ok {
		e.planned, left = true, strings.TrimSpace(pkg)
	}
	if left == "" || strings.ContainsAny(left, " ,") {
		return entry{}, fmt.Errorf("package %q", left)
	}
	e.pkg = left
	right = strings.TrimSpace(right)
	if i := strings.Index(right, "("); i >= 0 {
		right = strings.TrimSpace(right[:i]) // a note
	}
	switch right {
	case "stdlib only":
		e.stdlibOnly = true
	case "nothing":
	case "anything":
		e.allow = []string{"*"}
	default:
		for _, a := range strings.Split(right, ",") {
			if a = strings.TrimSpace(a); a == "" || strings.Contains(a, " ") {
				return entry{}, fmt.Errorf("target %q", a)
			}
			e.allow = append(e.allow, strings.TrimSpace(a))
		}
	}
	return e, nil
}

// diffGraph reports where the document's graph and the test's differ.
func diffGraph(doc, code []entry) []string {
	var errs []string
	byPkg := map[string]entry{}
	for _, e := range doc {
		if _, dup := byPkg[e.pkg]; dup {
			errs = append(errs, fmt.Sprintf("docs/architecture.md draws %s twice", e.pkg))
		}
		byPkg[e.pkg] = e
	}
	for _, c := range code {
		d, ok := byPkg[c.pkg]
		if !ok {
			errs = append(errs, fmt.Sprintf("docs/architecture.md does not draw %s", c.pkg))
			continue
		}
		delete(byPkg, c.pkg)
		if d.planned != c.planned || d.stdlibOnly != c.stdlibOnly {
			errs = append(errs, fmt.Sprintf("%s: docs/architecture.md says planned=%v stdlib-only=%v, the test %v %v",
				c.pkg, d.planned, d.stdlibOnly, c.planned, c.stdlibOnly))
		}
		da, ca := slices.Sorted(slices.Values(d.allow)), slices.Sorted(slices.Values(c.allow))
		if !slices.Equal(da, ca) {
			errs = append(errs, fmt.Sprintf("%s: docs/architecture.md lets it import %v, the test %v", c.pkg, da, ca))
		}
	}
	for _, d := range doc {
		if _, ok := byPkg[d.pkg]; ok {
			errs = append(errs, fmt.Sprintf("docs/architecture.md draws %s, which the test's graph does not list", d.pkg))
		}
	}
	return errs
}

// TestArchitectureDoc holds docs/architecture.md's diagram to the graph
// the imports are checked against, so the two never drift apart.
func TestArchitectureDoc(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseDocGraph(string(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range diffGraph(doc, graph) {
		t.Error(e)
	}
}
