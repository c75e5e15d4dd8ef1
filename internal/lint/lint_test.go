package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tsd-db/tsd"

// goPackage is the part of `go list -json` the rules read.
type goPackage struct {
	ImportPath   string
	Name         string
	Dir          string
	GoFiles      []string
	CgoFiles     []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// rel is the package path inside the module ("" for the root).
func (p goPackage) rel() string {
	return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
}

// listPackages runs go list over the whole module.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// entry is one line of the dependency graph.
type entry struct {
	pkg        string   // module-relative path; covers sub-packages without their own entry
	allow      []string // tsd packages it may import; "internal/*" is any internal package, "*" anything
	stdlibOnly bool     // no third-party imports either
	planned    bool     // no package yet: its place is decided before its code lands
}

// graph is the package graph of docs/architecture.md, whose diagram must
// say the same (TestArchitectureDoc): why each arrow exists is written
// there. Top to bottom, each entry imports only entries below it.
var graph = []entry{
	{pkg: "cmd/tsd", allow: []string{"api", "ingest", "ingest/flush", "ingest/head", "ingest/wal", "query", "rollup",
		"uid", "uid/index", "uid/index/lookup", "uid/index/rebuild",
		"schema", "rowkey", "salt", "series", "storage", "storage/pebble", "storage/bigtable", "internal/*"}},
	{pkg: "api", allow: []string{"ingest", "query", "uid", "uid/index/lookup", "storage",
		"internal/ratelog", // the rate-limited log of what clients make the server repeat
		"internal/jsonw",   // the one JSON writer
		"internal/changes", // which hours changed: the PromQL answer cache
		"api/ui"}},         // the web UI's embedded files
	{pkg: "api/ui", stdlibOnly: true}, // no HTTP code: api serves the files
	{pkg: "ingest/flush", allow: []string{"ingest", "ingest/head", "uid", "schema", "rowkey", "rollup", "storage", "series", "internal/*"}},
	{pkg: "ingest", allow: []string{"ingest/head", "ingest/wal", "uid", "uid/index", "schema", "rowkey", "salt", "rollup", "storage", "series", "internal/*"}},
	{pkg: "ingest/head", allow: []string{"ingest/wal", "uid", "uid/index", "storage", "series", "internal/*"}},
	{pkg: "query", allow: []string{"uid", "uid/index", "schema", "rowkey", "salt", "rollup", "storage", "series", "internal/*"}},
	{pkg: "uid/index/lookup", allow: []string{"uid", "uid/index", "internal/*"}},
	{pkg: "uid/index/rebuild", allow: []string{"uid/index", "rowkey", "storage"}},
	{pkg: "uid/index", allow: []string{"uid", "schema", "storage", "series", "internal/*"}},
	{pkg: "uid", allow: []string{"schema", "storage", "series", "internal/*"}},
	{pkg: "schema", allow: []string{"storage", "salt", "series"}},
	{pkg: "rollup", allow: []string{"rowkey", "salt", "series", "internal/*"}},
	{pkg: "rowkey", allow: []string{"salt", "series", "internal/*"}},
	{pkg: "ingest/wal", allow: []string{"series", "internal/durable"}},
	{pkg: "storage/pebble", allow: []string{"storage", "internal/*"}},
	{pkg: "storage/bigtable", allow: []string{"storage", "internal/*"}},
	{pkg: "storage/storagetest", allow: []string{"storage"}},
	{pkg: "storage", allow: []string{"internal/*"}},
	{pkg: "salt", allow: []string{"internal/*"}},
	{pkg: "series", stdlibOnly: true}, // the data model: points, iterators, UID widths
	{pkg: "grafana"},
	{pkg: "bench", allow: []string{"*"}},
	{pkg: "internal/changes", stdlibOnly: true},
	{pkg: "internal/cell", stdlibOnly: true},
	{pkg: "internal/cputime", stdlibOnly: true},
	{pkg: "internal/daemontest", stdlibOnly: true},
	{pkg: "internal/du", stdlibOnly: true},
	{pkg: "internal/durable"}, // pebble's vfs: files replaced whole
	{pkg: "internal/encoding", stdlibOnly: true},
	{pkg: "internal/invariants", stdlibOnly: true},
	{pkg: "internal/jsonw", stdlibOnly: true},
	{pkg: "internal/lint", stdlibOnly: true},
	{pkg: "internal/ratelog", stdlibOnly: true},
	{pkg: "internal/retention", stdlibOnly: true},
	{pkg: "internal/vfstest"}, // pebble's vfs, for tests
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// entryOf returns the most specific graph entry covering rel, or nil.
func entryOf(rel string) *entry {
	var best *entry
	for i := range graph {
		if e := &graph[i]; under(rel, e.pkg) && (best == nil || len(e.pkg) > len(best.pkg)) {
			best = e
		}
	}
	return best
}

// allows reports whether an importer under e may import the tsd package
// target (module-relative).
func (e *entry) allows(target string) bool {
	if te := entryOf(target); te == e {
		return true // within one entry: ingest/wal imports ingest
	}
	if under(target, "bench") {
		return false // nothing imports bench
	}
	for _, a := range e.allow {
		if a == "*" || (a == "internal/*" && under(target, "internal")) || covers(a, target) {
			return true
		}
	}
	return false
}

// covers reports whether the graph name a covers target: target is a or
// inside it, and no entry below a claims target for itself.
func covers(a, target string) bool {
	if !under(target, a) {
		return false
	}
	for _, e := range graph {
		if e.pkg != a && under(e.pkg, a) && under(target, e.pkg) {
			return false
		}
	}
	return true
}

// checkGraph reports entries that cover no package of the tree (rels,
// module-relative) unless planned, and planned entries whose package
// exists: the graph lists what there is.
func checkGraph(rels []string) []string {
	var errs []string
	for i := range graph {
		e := &graph[i]
		n := 0
		for _, rel := range rels {
			if entryOf(rel) == e {
				n++
			}
		}
		switch {
		case n == 0 && !e.planned:
			errs = append(errs, fmt.Sprintf("the dependency graph lists %s, but no such package exists", e.pkg))
		case n > 0 && e.planned:
			errs = append(errs, fmt.Sprintf("%s exists: its graph entry is no longer planned", e.pkg))
		}
	}
	return errs
}

// isStdlib reports whether an import path is in the standard library: its
// first element has no dot.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && path != "C"
}

// bannedEverywhere may not be imported by any file, tests included.
var bannedEverywhere = map[string]string{
	"github.com/pkg/errors": "use the standard errors package with %w",
	"io/ioutil":             "deprecated: use io and os",
}

// checkImports applies the graph and the third-party rules to one package.
func checkImports(p goPackage) []string {
	var errs []string
	rel := p.rel()
	e := entryOf(rel)
	if e == nil {
		errs = append(errs, fmt.Sprintf("%s: not in the dependency graph (docs/architecture.md)", p.ImportPath))
	}
	for _, imp := range p.Imports {
		if msg := checkImport(rel, e, imp); msg != "" {
			errs = append(errs, fmt.Sprintf("%s imports %s: %s", p.ImportPath, imp, msg))
		}
	}
	for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
		if why, ok := bannedEverywhere[imp]; ok {
			errs = append(errs, fmt.Sprintf("%s (test) imports %s: %s", p.ImportPath, imp, why))
		}
	}
	return errs
}

// checkImport returns why importer rel (under entry e) may not import imp
// in a non-test file, or "".
func checkImport(rel string, e *entry, imp string) string {
	if why, ok := bannedEverywhere[imp]; ok {
		return why
	}
	inAPI := under(rel, "api")
	switch {
	case under(imp, "github.com/valyala/fasthttp") && !inAPI:
		return "only api may use fasthttp"
	case under(imp, "net/http") && inAPI:
		return "api serves with fasthttp; the stdlib HTTP server stays out (status codes: fasthttp.Status*)"
	case under(imp, module):
		if e != nil && !e.allows(strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")) {
			return "not an arrow of the dependency graph (docs/architecture.md) from " + e.pkg
		}
	case e != nil && e.stdlibOnly && !isStdlib(imp):
		return e.pkg + " imports the standard library only"
	}
	return ""
}

// mainAllowed reports whether rel may be a main package, which alone may
// exit and read flags and the environment.
func mainAllowed(rel string) bool {
	return rel == "cmd/tsd" || strings.HasPrefix(rel, "bench/cmd/")
}

// mainOnly are the package-level functions only main packages may use.
var mainOnly = map[string]map[string]bool{
	"os":  {"Exit": true, "Getenv": true, "LookupEnv": true, "Environ": true},
	"log": {"Fatal": true, "Fatalf": true, "Fatalln": true},
}

// checkSource applies the main-only rules to one non-test file of the
// package rel named name.
func checkSource(rel, name, filename string, src []byte) ([]string, error) {
	if name == "main" && mainAllowed(rel) {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var errs []string
	if name == "main" {
		errs = append(errs, fmt.Sprintf("%s: main package outside cmd/tsd and bench/cmd/*", filename))
	}
	local := map[string]string{} // local name → "os" or "log"
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if path == "flag" {
			errs = append(errs, fmt.Sprintf("%s: imports flag; only main packages read flags", fset.Position(imp.Pos())))
		}
		if _, ok := mainOnly[path]; ok {
			local[importName(imp, path)] = path
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if msg := mainOnlyUse(n, local); msg != "" {
			errs = append(errs, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), msg))
		}
		return true
	})
	return errs, nil
}

// importName is the name a file uses for an imported package.
func importName(imp *ast.ImportSpec, path string) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	return path
}

// mainOnlyUse reports a reference such as os.Exit through a local import
// name, or "".
func mainOnlyUse(n ast.Node, local map[string]string) string {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	if path, ok := local[id.Name]; ok && mainOnly[path][sel.Sel.Name] {
		return fmt.Sprintf("%s.%s; only main packages exit or read the environment", path, sel.Sel.Name)
	}
	return ""
}

// checkDoc reports a package without a doc.go that carries its comment.
func checkDoc(p goPackage) []string {
	path := filepath.Join(p.Dir, "doc.go")
	src, err := os.ReadFile(path)
	if err != nil {
		return []string{fmt.Sprintf("%s: no doc.go", p.ImportPath)}
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", path, err)}
	}
	if f.Doc == nil || strings.TrimSpace(f.Doc.Text()) == "" {
		return []string{fmt.Sprintf("%s: doc.go has no package comment", p.ImportPath)}
	}
	return nil
}

// TestArchitecture checks every package of the module.
func TestArchitecture(t *testing.T) {
	pkgs := listPackages(t)
	var rels []string
	for _, p := range pkgs {
		rels = append(rels, p.rel())
	}
	for _, e := range checkGraph(rels) {
		t.Error(e)
	}
	for _, p := range pkgs {
		errs := slices.Concat(checkImports(p), checkDoc(p))
		for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
			path := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			more, err := checkSource(p.rel(), p.Name, path, src)
			if err != nil {
				t.Fatal(err)
			}
			errs = append(errs, more...)
		}
		for _, e := range errs {
			t.Error(e)
		}
	}
}
