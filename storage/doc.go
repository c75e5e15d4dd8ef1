// Package storage is tsd's wide-column contract: an HBase-like store of
// tables, column families, qualifiers and timestamped versions. It knows
// nothing of time series. Engines (storage/pebble, storage/bigtable) implement
// it, and storage/storagetest proves every engine against one conformance
// suite.
//
// # Data model
//
// A table has a fixed set of column families. A cell is
// (row, family, qualifier, timestamp, value). Rows, qualifiers and values are
// arbitrary bytes; a family is a name matching [_a-zA-Z0-9][-_.a-zA-Z0-9]*
// (Bigtable's rule). Cells are ordered by row (bytewise), then family name,
// then qualifier (bytewise), then timestamp descending, so the newest version
// of a column comes first.
//
// # Invariants every engine honours
//
//   - Row keys are non-empty and at most MaxRowKeySize bytes (Bigtable and
//     HBase both reject an empty row). Qualifiers and values may be empty.
//   - Timestamps are int64 microseconds since the Unix epoch at millisecond
//     granularity (a multiple of 1000, as Bigtable requires). A timestamp of
//     zero in a written cell means "now" by the engine's clock. Negative
//     timestamps and ones that are not whole milliseconds are
//     ErrInvalidArgument.
//   - For two writes of one column with equal timestamps the later write wins:
//     there is one version per (row, family, qualifier, timestamp).
//   - A delete removes the matching cells that exist when it runs. It leaves
//     no marker (tombstone) that hides later puts, even puts with older
//     timestamps. Time ranges are half-open [Min, Max) in microseconds; to
//     delete exactly one version use [ts, ts+1000).
//   - Each family has MaxVersions (0 = unlimited) and TTL (0 = forever).
//     Both are applied at read time on every path, so an engine whose garbage
//     collection is lazy never shows an expired or surplus version; expired
//     data is also removed physically in the background so its space comes
//     back. TTL is measured from the cell timestamp to the engine's clock.
//   - Every single-row operation is atomic: Put, Delete, Increment,
//     CheckAndPut, Append and each row of Apply. Apply across rows is not
//     atomic: on error any subset of its rows may have been applied.
//     ApplyGroup writes several tables' mutations, in one commit where the
//     engine's tables implement GroupApplier (Pebble), else one Apply per
//     table (Bigtable, which has no write across tables); it promises no
//     more than Apply does.
//   - Row-key filters are RE2 regular expressions matched against the whole
//     key as raw bytes (Latin-1 view, "." matches any byte, "(?s)" implied),
//     as Bigtable's row-key regex filter does.
//   - Every call takes a context.Context and stops early when it is done.
//
// # Scans
//
// Scan yields rows, not cells: each Row is a row key and the row's cells
// that pass the read options, in storage order; rows come in key order
// (descending with Reverse, each row's cells still in storage order). A
// row with no matching cell is left out, and Limit counts the rows given.
//
// A row whose cells take more than ScanOptions.MaxBatchBytes (64 MiB by
// default) arrives as several Rows with the same key, every one but the
// last marked Partial, so that no reader holds more of a row at once: an
// OpenTSDB row of millisecond points holds up to 3.6 million cells. A cell
// counts CellBytes, its qualifier and value bytes plus CellOverhead for
// the cell itself. The cut is exact, so every engine gives the same
// batches: each takes the row's next cells in order while their sum stays
// within the bound, and at least one (a cell larger than the bound is a
// batch alone). A reader that needs whole rows (to decode one) gathers
// batches until one is not Partial; one that reads keys, or each cell on
// its own, takes the batches as they come. A scan that fails inside a row
// gives nothing more of it than the Partial batches already returned.
//
// # Byte slices
//
// Slices passed in are not retained after a call returns. Cells returned by
// Get and Append are owned by the caller. A Scanner's Row (its key, its
// cells and the bytes they point to) aliases the engine's buffers and is
// valid only until the next call to Next or Close; copy what must outlive
// it. Every cell of a Row has the Row's Key as its Row.
//
// GetAppend is Get into the caller's reusable memory: it appends the cells
// to dst and every byte they point to (the row key once, then each cell's
// qualifier and value) to buf, and returns both slices grown. The new cells
// point into the returned buf only, never into dst's or buf's old backing
// arrays, so growing buf cannot leave them dangling; cells appended by an
// earlier call keep pointing at the memory they were built in and stay
// valid until the caller overwrites it (typically by reading the next row
// into dst[:0] and buf[:0]). The engine keeps no reference to dst or buf.
// The cells are those Get returns, in the same order, and each cell's
// qualifier and value are capped (cap = len), so appending to one never
// overwrites its neighbour. On an error, ErrNotFound (no cell matched)
// included, dst and buf come back with their lengths unchanged; the bytes
// between len and cap may have been written.
//
// # Errors
//
// Callers branch with errors.Is on ErrNotFound, ErrConflict, ErrClosed,
// ErrInvalidArgument, ErrRetryable, ErrReadOnly and ErrCorruption; a
// *CorruptionError names the table, row and qualifier. ErrReadOnly (made
// by ReadOnly, naming its cause) is a write refused while the store cannot
// take writes, a full disk for one; it is retryable and reads go on.
package storage
