// Package lint keeps tsd's architecture and conventions as tests, so a
// broken rule fails `go test ./...` with no linter to download. It has no
// code of its own; its tests check, over `go list -json ./...` and go/ast:
//
//   - the package graph of docs/architecture.md (lint_test.go's graph, and
//     the document's diagram, which must say the same: docgraph_test.go):
//     each package's direct imports of tsd packages (non-test files)
//     follow the graph's arrows. A package the graph does not cover is an
//     error, and so is an entry that covers no package, unless it is
//     marked planned (a package whose place is decided before its code
//     lands; once it lands, the mark must go). An entry covers its
//     sub-packages unless they have their own entry, and a package may
//     import its own entry's packages (ingest/x imports ingest/y). bench
//     may import any tsd package, internal ones included, and nothing but
//     bench imports bench;
//   - third-party imports: github.com/valyala/fasthttp only in api; the
//     stdlib net/http (and net/http/...) nowhere in api's non-test files,
//     since fasthttp serves and fasthttp's Status* constants cover status
//     codes; github.com/pkg/errors and io/ioutil nowhere, tests included;
//     internal helpers and series import the standard library only;
//   - only main packages, and only cmd/tsd and bench/cmd/*, may import
//     flag, call os.Exit or log.Fatal*, or read the environment
//     (os.Getenv, os.LookupEnv, os.Environ); test files are exempt;
//   - every package has a doc.go carrying its package comment.
//
// Each checker is also tested on fake packages, trees and documents, so a
// rule that stopped firing would fail too.
package lint
