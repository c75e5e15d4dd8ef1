// Package lint keeps tsd's architecture and conventions as tests, so a
// broken rule fails `go test ./...` with no linter to download
// (STYLE.md habit 18). It has no code of its own; lint_test.go checks,
// over `go list -json ./...` and go/ast:
//
//   - the dependency graph of STYLE.md: each package's direct imports of
//     tsd packages (non-test files) follow the graph's arrows; a package
//     the graph does not list is an error. An entry covers its
//     sub-packages unless they have their own entry, and a package may
//     import its own entry's packages (ingest/x imports ingest/y).
//     Decisions where STYLE.md is silent: internal/* packages other than
//     the listed helpers (this one) are held to the same "stdlib only"
//     rule; bench may import any tsd package, internal ones included
//     (bench/gen builds series points), and nothing but bench
//     imports bench;
//   - third-party imports: github.com/valyala/fasthttp only in api; the
//     stdlib net/http (and net/http/...) nowhere in api's non-test files,
//     since fasthttp serves and fasthttp's Status* constants cover status
//     codes; github.com/pkg/errors and io/ioutil nowhere, tests included;
//     internal helpers import the standard library only;
//   - only main packages, and only cmd/tsd and bench/cmd/*, may import
//     flag, call os.Exit or log.Fatal*, or read the environment
//     (os.Getenv, os.LookupEnv, os.Environ); test files are exempt;
//   - every package has a doc.go carrying its package comment.
//
// Each checker is also tested on fake packages and sources, so a rule that
// stopped firing would fail too.
package lint
