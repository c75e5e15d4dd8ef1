package lint

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// fakePkg builds a package under the module with the given imports.
func fakePkg(rel string, imports ...string) goPackage {
	return goPackage{ImportPath: module + "/" + rel, Name: rel[strings.LastIndex(rel, "/")+1:], Imports: imports}
}

func tsd(rel string) string { return module + "/" + rel }

// TestImportRules proves each import rule fires on a breaking edge and
// stays quiet on an allowed one.
func TestImportRules(t *testing.T) {
	for _, tc := range []struct {
		pkg  goPackage
		want string // substring of the single error, "" for none
	}{
		{fakePkg("storage/pebble", tsd("storage"), "github.com/cockroachdb/pebble/v2"), ""},
		{fakePkg("storage", tsd("uid")), "not an arrow"},
		{fakePkg("storage", tsd("storage/pebble")), "not an arrow"},
		{fakePkg("uid", tsd("uid/index")), "not an arrow"},
		{fakePkg("uid/index", tsd("uid")), ""},
		{fakePkg("ingest", tsd("query")), "not an arrow"},
		{fakePkg("query", tsd("ingest/wal")), "not an arrow"},
		{fakePkg("ingest/telnet", tsd("ingest/wal"), tsd("series")), ""},
		{fakePkg("ingest/head", tsd("ingest/wal"), tsd("uid/index"), tsd("series")), ""},
		{fakePkg("ingest/head", tsd("ingest/flush")), "not an arrow"},
		{fakePkg("ingest/head", tsd("ingest")), "not an arrow"},
		{fakePkg("ingest/head", tsd("rowkey")), "not an arrow"},
		{fakePkg("ingest/service", tsd("ingest/head"), tsd("ingest")), ""},
		{fakePkg("ingest/service", tsd("ingest/flush")), "not an arrow"},
		{fakePkg("ingest/flush", tsd("ingest/head"), tsd("ingest"), tsd("rowkey"), tsd("schema")), ""},
		{fakePkg("ingest/flush", tsd("query")), "not an arrow"},
		{fakePkg("ingest/wal", tsd("ingest/head")), "not an arrow"},
		{fakePkg("query", tsd("ingest/head")), "not an arrow"},
		{fakePkg("uid/index/rebuild", tsd("uid/index"), tsd("rowkey"), tsd("storage")), ""},
		{fakePkg("uid/index/rebuild", tsd("ingest")), "not an arrow"},
		{fakePkg("uid/index", tsd("rowkey")), "not an arrow"},
		{fakePkg("query/promql", tsd("query"), tsd("query/agg")), ""},
		{fakePkg("rollup", tsd("rowkey"), tsd("salt"), tsd("series"), tsd("internal/invariants")), ""},
		{fakePkg("rollup", tsd("query/agg")), "not an arrow"},
		{fakePkg("rollup", tsd("query")), "not an arrow"},
		{fakePkg("rollup", tsd("uid")), "not an arrow"},
		{fakePkg("rollup", tsd("storage")), "not an arrow"},
		{fakePkg("rollup", tsd("schema")), "not an arrow"},
		{fakePkg("ingest", tsd("rollup"), tsd("schema")), ""},
		{fakePkg("query/read", tsd("rollup"), tsd("schema")), ""},
		{fakePkg("api", tsd("rollup")), "not an arrow"},
		{fakePkg("schema", tsd("storage"), tsd("salt"), tsd("series")), ""},
		{fakePkg("schema", tsd("uid")), "not an arrow"},
		{fakePkg("schema", tsd("rowkey")), "not an arrow"},
		{fakePkg("schema", tsd("internal/invariants")), "not an arrow"},
		{fakePkg("storage", tsd("schema")), "not an arrow"},
		{fakePkg("salt", tsd("schema")), "not an arrow"},
		{fakePkg("series", tsd("schema")), "not an arrow"},
		{fakePkg("rowkey", tsd("schema")), "not an arrow"},
		{fakePkg("uid", tsd("schema"), tsd("series"), tsd("storage")), ""},
		{fakePkg("uid/index", tsd("schema"), tsd("uid")), ""},
		{fakePkg("uid/index/lookup", tsd("uid/index"), tsd("uid")), ""},
		{fakePkg("uid/index/lookup", tsd("storage")), "not an arrow"},
		{fakePkg("uid/index", tsd("uid/index/lookup")), "not an arrow"},
		{fakePkg("api", tsd("uid/index/lookup"), tsd("uid")), ""},
		{fakePkg("api", tsd("uid/index")), "not an arrow"},
		{fakePkg("api", tsd("schema")), "not an arrow"},
		{fakePkg("query", tsd("uid/index/lookup")), "not an arrow"},
		{fakePkg("rowkey", tsd("salt"), tsd("internal/encoding/entropy")), ""},
		{fakePkg("salt", tsd("storage")), "not an arrow"},
		{fakePkg("api", tsd("storage"), tsd("ingest"), "github.com/valyala/fasthttp"), ""},
		{fakePkg("api", tsd("storage/pebble")), "not an arrow"},
		{fakePkg("api", "net/http"), "stdlib HTTP server"},
		{fakePkg("api/ui", "embed", "crypto/sha256"), ""},
		{fakePkg("api/ui", "github.com/valyala/fasthttp"), "standard library only"},
		{fakePkg("api/ui", tsd("api")), "not an arrow"},
		{fakePkg("api", tsd("api/ui")), ""},
		{fakePkg("api/promapi", "net/http/pprof"), "stdlib HTTP server"},
		{fakePkg("ingest", "github.com/valyala/fasthttp"), "only api may use fasthttp"},
		{fakePkg("cmd/tsd", "github.com/valyala/fasthttp/fasthttputil"), "only api may use fasthttp"},
		{fakePkg("cmd/tsd", tsd("storage/storagetest")), "not an arrow"},
		{fakePkg("cmd/tsd", tsd("api"), tsd("storage/bigtable"), tsd("internal/invariants")), ""},
		{fakePkg("uid", "io/ioutil"), "deprecated"},
		{fakePkg("uid", "github.com/pkg/errors"), "standard errors"},
		{fakePkg("series", "github.com/cockroachdb/pebble/v2"), "standard library only"},
		{fakePkg("series", tsd("internal/invariants")), "not an arrow"},
		{fakePkg("internal/encoding/entropy", tsd("internal/encoding"), "math/bits"), ""},
		{fakePkg("internal/lint", "golang.org/x/tools/go/packages"), "standard library only"},
		{fakePkg("internal/ratelog", tsd("internal/invariants")), "not an arrow"},
		{fakePkg("internal/newhelper"), "not in the dependency graph"},
		{fakePkg("grafana", tsd("storage")), "not an arrow"},
		{fakePkg("bench/harness", tsd("storage/pebble"), tsd("series"), tsd("bench/gen")), ""},
		{fakePkg("query", tsd("bench/gen")), "not an arrow"},
		{fakePkg("newthing"), "not in the dependency graph"},
	} {
		errs := checkImports(tc.pkg)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s %v: unexpected %q", tc.pkg.rel(), tc.pkg.Imports, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.want)):
			t.Errorf("%s %v: got %q, want one error containing %q", tc.pkg.rel(), tc.pkg.Imports, errs, tc.want)
		}
	}
}

// TestGraphCoversTree proves the graph must name what exists: an entry
// without a package, and a planned entry whose package landed, are errors.
func TestGraphCoversTree(t *testing.T) {
	var all []string
	for _, e := range graph {
		if !e.planned {
			all = append(all, e.pkg)
		}
	}
	if errs := checkGraph(all); len(errs) != 0 {
		t.Errorf("one package per entry: %q", errs)
	}
	without := slices.DeleteFunc(slices.Clone(all), func(rel string) bool { return rel == "schema" })
	if errs := checkGraph(without); len(errs) != 1 || !strings.Contains(errs[0], "lists schema, but no such package exists") {
		t.Errorf("tree without schema: %q", errs)
	}
	planned := entryOf("rollup") // pretend it had not landed yet
	planned.planned = true
	errs := checkGraph(append(all, "rollup/config"))
	planned.planned = false
	if len(errs) != 1 || !strings.Contains(errs[0], "rollup exists") {
		t.Errorf("tree with a package of a planned entry: %q", errs)
	}
	if errs := checkGraph(append(all, "uid/index/lookup/more", "query/meta")); len(errs) != 0 {
		t.Errorf("sub-packages are covered by their parent entry: %q", errs)
	}
}

// TestDocGraphRules proves the document's diagram is read line by line
// and every difference from the test's graph is reported.
func TestDocGraphRules(t *testing.T) {
	code := []entry{
		{pkg: "api", allow: []string{"ingest", "uid/index/lookup"}},
		{pkg: "rollup", allow: []string{"rowkey", "internal/*"}, planned: true},
		{pkg: "series", stdlibOnly: true},
		{pkg: "grafana"},
		{pkg: "bench", allow: []string{"*"}},
	}
	doc := "# x\n" + graphMarker + "\n```\n" +
		"api ──────────────► uid/index/lookup, ingest   (the edge)\n" +
		"rollup (planned) ─► rowkey, internal/*\n\n" +
		"series ───────────► stdlib only\n" +
		"grafana ──────────► nothing\n" +
		"bench ────────────► anything (benchmarks)\n```\nprose ► not read\n"
	got, err := parseDocGraph(doc)
	if err != nil {
		t.Fatal(err)
	}
	if errs := diffGraph(got, code); len(errs) != 0 {
		t.Errorf("matching graphs: %q", errs)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"uid/index/lookup, ingest", "uid/index, ingest", "api: docs/architecture.md lets it import [ingest uid/index]"},
		{"rollup (planned)", "rollup", "rollup: docs/architecture.md says planned=false"},
		{"stdlib only", "nothing", "series: docs/architecture.md says planned=false stdlib-only=false"},
		{"grafana ──────────► nothing\n", "", "does not draw grafana"},
		{"bench", "bench2", "draws bench2, which the test's graph does not list"},
		{"series ───", "api ───", "draws api twice"},
	} {
		got, err := parseDocGraph(strings.Replace(doc, tc.from, tc.to, 1))
		if err != nil {
			t.Fatal(err)
		}
		if errs := diffGraph(got, code); len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), tc.want) {
			t.Errorf("%q -> %q: got %q, want %q", tc.from, tc.to, errs, tc.want)
		}
	}
	for _, bad := range []string{
		"# x\n```\napi ► ingest\n```\n",                    // no marker
		"# x\n" + graphMarker + "\napi ► ingest\n",         // no block
		"# x\n" + graphMarker + "\n```\napi ingest\n```\n", // no arrow
		"# x\n" + graphMarker + "\n```\napi ► in gest\n```\n",
		"# x\n" + graphMarker + "\n```\napi ► ingest\n", // not closed
	} {
		if _, err := parseDocGraph(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func TestBannedInTests(t *testing.T) {
	p := fakePkg("uid")
	p.XTestImports = []string{"io/ioutil"}
	if errs := checkImports(p); len(errs) != 1 || !strings.Contains(errs[0], "(test) imports io/ioutil") {
		t.Errorf("io/ioutil in a test: %q", errs)
	}
	p = fakePkg("ingest")
	p.TestImports = []string{"github.com/valyala/fasthttp", tsd("query"), "net/http"}
	if errs := checkImports(p); len(errs) != 0 {
		t.Errorf("test files are exempt from the graph: %q", errs)
	}
}

// TestSourceRules proves the main-only rules fire, through renamed
// imports too, and spare main packages and shadowing locals.
func TestSourceRules(t *testing.T) {
	for _, tc := range []struct {
		rel, name, src string
		want           []string // substrings, one per expected error
	}{
		{"uid", "uid", `package uid
import "os"
func f() { os.Exit(1) }`, []string{"x.go:3:12: os.Exit"}},
		{"uid", "uid", `package uid
import sys "os"
var exit = sys.Exit
func f() string { return sys.Getenv("HOME") + sys.Environ()[0] }`, []string{"os.Exit", "os.Getenv", "os.Environ"}},
		{"ingest", "ingest", `package ingest
import ("flag"; "log")
var v = flag.Int("n", 1, "")
func f() { log.Fatalf("x") ; log.Printf("ok") }`, []string{"imports flag", "log.Fatalf"}},
		{"storage/pebble", "pebble", `package pebble
import "os"
func f() { _, _ = os.LookupEnv("X"); _ = os.Getpid() }`, []string{"os.LookupEnv"}},
		{"uid", "uid", `package uid
type T struct{ Exit func() }
func f(os T) { os.Exit() }`, nil},
		{"cmd/tsd", "main", `package main
import ("flag"; "os")
func main() { flag.Parse(); os.Exit(0) }`, nil},
		{"bench/cmd/tsdload", "main", `package main
import "os"
func main() { os.Exit(2) }`, nil},
		{"tools/gen", "main", `package main
func main() {}`, []string{"main package outside"}},
	} {
		errs, err := checkSource(tc.rel, tc.name, "x.go", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) != len(tc.want) {
			t.Errorf("%s: got %q, want %d errors %q", tc.rel, errs, len(tc.want), tc.want)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(errs[i], w) {
				t.Errorf("%s: error %q, want it to contain %q", tc.rel, errs[i], w)
			}
		}
	}
}

func TestDocRule(t *testing.T) {
	dir := t.TempDir()
	p := goPackage{ImportPath: tsd("x"), Dir: dir}
	if errs := checkDoc(p); len(errs) != 1 || !strings.Contains(errs[0], "no doc.go") {
		t.Errorf("missing doc.go: %q", errs)
	}
	writeFile(t, dir+"/doc.go", "package x\n")
	if errs := checkDoc(p); len(errs) != 1 || !strings.Contains(errs[0], "no package comment") {
		t.Errorf("doc.go without comment: %q", errs)
	}
	writeFile(t, dir+"/doc.go", "// Package x does things.\npackage x\n")
	if errs := checkDoc(p); len(errs) != 0 {
		t.Errorf("good doc.go: %q", errs)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
