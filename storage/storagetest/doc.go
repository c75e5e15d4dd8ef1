// Package storagetest is the conformance suite every storage engine runs
// from its own test:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t testing.TB) storage.DB { ... }, storagetest.Options{})
//	}
//
// Run executes one subtest per behaviour of the contract in package storage
// (tables, put/get, GetAppend into reused buffers, versions, TTL, deletes,
// Apply, scans, Increment, CheckAndPut, Append, closed stores, cancelled
// contexts; every Get expectation is also checked through GetAppend, and
// the rows of every scan against the row shape: keys in order, each cell
// in its row, rows cut into Partial batches exactly at MaxBatchBytes) and
// a model-based random test that drives the engine and an in-memory model
// with the same operation sequence, reading through Get, GetAppend and
// Scan (with random batch bounds) and comparing results after every step.
//
// CutRows serves the tests of code that reads scans: it makes every row
// arrive in Partial batches without writing 64 MiB rows.
//
// The model lives only in this package and is not exported: it is the
// executable reading of storage/doc.go, not an engine. Its invariants:
// cells of a column are kept newest first with one version per timestamp;
// deletes remove existing cells only; a family's MaxVersions and TTL are
// applied when reading (first the family's limits, as if garbage collection
// had run, then the read's filters, then ReadOptions.MaxVersions); a scan
// cuts each row into batches greedily, in storage order, each holding the
// cells that fit in MaxBatchBytes (at least one).
//
// Reading of the contract where storage/doc.go leaves room, checked here:
//   - A family's MaxVersions hides surplus versions before the read's time
//     range is applied, so a time range never uncovers a version that
//     garbage collection may already have removed.
//   - TTL and MaxVersions also hold for Increment, Append and CheckAndPut:
//     an expired cell counts as absent.
//   - A call whose context is done fails with an error for which
//     errors.Is(err, context.Canceled) (or DeadlineExceeded) holds.
//   - Tables lists tables, and each table's families, in name order.
//   - A Scan row Limit counts rows that pass the filters, a row cut into
//     batches once.
//   - Increment and Append stamp their result with the later of the clock
//     and the old cell's timestamp, so the result is the newest version even
//     over a cell stamped in the future (Bigtable's rule); otherwise the next
//     increment would read the old value again.
//   - Put with no cells and CheckAndPut with no cells (a pure check) succeed
//     and write nothing.
//   - Rows of one Apply are independent: the suite never puts one row twice
//     in a batch, nor two cells of one version in one Put.
//
// This package reads no flags; an engine's test file may define flags such
// as -storagetest.steps and pass them in Options.
package storagetest
