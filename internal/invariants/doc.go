// Package invariants turns impossible states into panics in tests (built with
// -race or -tags invariants) and into errors in production, so a bug is loud
// where it is cheap and survivable where it is not.
package invariants
