// Package rebuild rebuilds the series index (uid/index) from the data
// table: `tsd index rebuild`, for a store whose index is missing or
// behind, an OpenTSDB one for example.
//
// RebuildIndex scans a whole data table and registers every series with
// the hours of its rows through index.RegisterMany, Batch series at a
// time, so its memory does not grow with the table. It reads row keys only
// (cells are skipped, and a row that arrives in Partial batches is handled
// once). Rows of the all-zero metric (global annotations) are not series;
// a row whose key does not parse is logged, counted and skipped, so one
// corrupt row does not stop a rebuild. Registering is idempotent: running
// it twice, or on a store whose index is complete, only widens spans that
// are too narrow.
//
// It lives beside the index it writes rather than in the write path,
// where it used to be placed only because the import rules let ingest
// read row keys: it touches no head, log or flush, and its only caller is
// the offline command. It is a package of its own, not part of uid/index,
// because it parses data-table row keys (rowkey), which the index itself
// never needs; the package graph (docs/architecture.md) gives it that one
// arrow. Kept out of cmd/tsd, its tests stay a library's: real tables on
// the embedded engine, under the race detector with the rest of uid.
package rebuild
