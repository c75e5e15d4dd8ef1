package lint

import (
	"os"
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
		{fakePkg("query/promql", tsd("query"), tsd("query/agg")), ""},
		{fakePkg("rollup", tsd("query/agg")), ""},
		{fakePkg("rollup", tsd("query")), "not an arrow"},
		{fakePkg("rowkey", tsd("salt"), tsd("internal/encoding/entropy")), ""},
		{fakePkg("salt", tsd("storage")), "not an arrow"},
		{fakePkg("api", tsd("storage"), tsd("ingest"), "github.com/valyala/fasthttp"), ""},
		{fakePkg("api", tsd("storage/pebble")), "not an arrow"},
		{fakePkg("api", "net/http"), "stdlib HTTP server"},
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
		{fakePkg("grafana", tsd("storage")), "not an arrow"},
		{fakePkg("bench/harness", tsd("storage/pebble"), tsd("series"), tsd("bench/gen")), ""},
		{fakePkg("query", tsd("bench/gen")), "not an arrow"},
		{fakePkg("newthing"), "not in STYLE.md's dependency graph"},
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
