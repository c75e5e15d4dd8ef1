// Package bigtable is the storage contract (package storage) on Cloud
// Bigtable through cloud.google.com/go/bigtable, for several tsd daemons
// sharing one store. It passes storage/storagetest against the in-process
// emulator (cloud.google.com/go/bigtable/bttest).
//
// # Layout
//
// A contract table is the Bigtable table of the same name in the configured
// instance (tsdb, tsdb-uid and tsdb-meta are legal Bigtable names), a family
// is a column family, and a cell is a Bigtable cell: row key, family,
// qualifier and timestamp as they are, no prefix or encoding added, so the
// tables are the ones OpenTSDB's Bigtable driver would read. Timestamps are
// the contract's microseconds at millisecond granularity, which is
// Bigtable's own unit; a zero timestamp is replaced by Options.Clock.
//
// # Family limits
//
// A family's MaxVersions and TTL become its garbage-collection policy: the
// union of MaxVersionsPolicy and MaxAgePolicy (TTL rounded up to a
// microsecond), so a cell goes when either limit is passed. Bigtable
// collects lazily (up to about a week) and the emulator ignores intersection
// policies and only collects after a family is modified, so every read also
// applies the limits server-side: per family a chain of LatestNFilter
// (MaxVersions), then a TimestampRangeFilter from the TTL cutoff by
// Options.Clock, then the read's time range and MaxVersions. Increment,
// Append and CheckAndPut see the same limits (an expired cell is absent).
// Reading a table's limits back from the server, an intersection policy set
// by someone else counts as no limit, so no read hides a cell the server
// keeps. Handles cache their table's limits; EnsureTable on this DB
// refreshes them, a change made by another daemon is seen when a new DB
// opens.
//
// # Mapping of operations
//
//   - Get: ReadRow with the filter above; families come back in creation
//     order and are sorted by name.
//   - Scan: ReadRows over the row range in chunks of ScanChunkRows rows
//     (LimitRows) or ScanChunkBytes, each continuing after the last key, so
//     no goroutine is needed and each chunk is retried alone. Reverse is
//     Bigtable's reversed ReadRows (ReverseScan), chunked the same way
//     backwards. The client hands each row over whole (Bigtable caps a row
//     at 256 MiB), so a row larger than the scan's MaxBatchBytes is cut
//     into Partial batches from memory: the bound shapes the rows the
//     caller sees but not what the client holds. Qualifier selections are ColumnRangeFilters (an exact
//     qualifier q is [q, q+"\x00")), never regular expressions. A row
//     regex is parsed client-side (rsc.io/binaryregexp syntax, Latin-1,
//     dot-all): an invalid one is ErrInvalidArgument before any request,
//     and a valid one is printed back as ASCII RE2 with bytes above 0x7f as
//     \x{NN} and anchored with \A...\z, which Bigtable and the emulator
//     read alike.
//   - Put, Delete: one Apply (MutateRow). Deletes map to DeleteRow,
//     DeleteCellsInFamily, DeleteCellsInColumn and DeleteTimestampRange,
//     none of which leaves a tombstone; range bounds are rounded up to whole
//     milliseconds, which selects exactly the same cells. Bigtable cannot
//     delete a time range of a whole family, so that deletion first reads
//     the family's columns with cells in the range: a column first written
//     between that read and the delete survives.
//   - Apply: ApplyBulk in requests of at most BulkMaxMutations mutations
//     (Bigtable allows 100,000) and BulkMaxBytes bytes; rows failing with a
//     retryable error are retried alone.
//   - DeleteRange: DropRowRange when the range is exactly one row-key
//     prefix [p, successor(p)) (DropAllRows for the whole table), otherwise
//     a keys-only scan whose rows are deleted through ApplyBulk. With
//     CreateTables off no admin request is sent, so every range is scanned.
//   - Increment, Append: ReadModifyWrite (Increment, AppendValue). The new
//     cell carries the server's timestamp, not Options.Clock. In a family
//     with a TTL a CheckAndMutate first deletes the column if every cell of
//     it has expired, because ReadModifyWrite would build on such a cell.
//   - CheckAndPut: CheckAndMutate. The predicate is the visible column
//     (exact column range and TTL cutoff); for an expected value it is
//     narrowed to the newest cell and ValueRangeFilter [v, v+"\x00"), which
//     matches exactly v, binary-safe. Expected nil writes in the false
//     branch. With no cells to write it is a plain read.
//
// # Errors and retries
//
// One table (codeClass in errors.go) maps gRPC codes to the contract's
// classes: NotFound is ErrNotFound; InvalidArgument, OutOfRange and
// FailedPrecondition are ErrInvalidArgument; Unavailable, DeadlineExceeded
// of an attempt, Aborted, ResourceExhausted and Internal are retryable. A
// done caller context always wins: its error is returned, never marked
// retryable. Idempotent calls (all but Increment, Append and CheckAndPut,
// whose repeat could apply them twice) are retried MaxAttempts times with
// capped exponential backoff and full jitter. Every attempt is bounded by
// AttemptTimeout because the Go client itself retries Unavailable until its
// context ends, which would turn a dead server into a hang.
//
// # Emulator and credentials
//
// The package never reads the environment. With Options.EmulatorHost set,
// Open dials that address without TLS or credentials (gRPC message limits
// 256 MiB, reconnect backoff at most 1s) and turns off the client's metrics
// export; cmd/tsd passes BIGTABLE_EMULATOR_HOST there. Otherwise the
// clients use Application Default Credentials and ClientOptions.
//
// # Byte slices
//
// Cells from Get, Append and Increment are the caller's. A Scanner's row
// is valid until the next Next or Close (its cells point into the chunk);
// the scanner drops its chunk buffer on Close.
package bigtable
