// Package storebench measures the storage core (issue 2's figures) on
// OpenTSDB-shaped cells: tsd's storage contract (any storage.DB, normally the
// storage/pebble engine) against raw Pebble with pebble.Sync on the same
// batches, in the same run.
//
// Cell shape: each point of the bench dataset becomes one cell with a 26-byte
// OpenTSDB row key ([salt 1][metric 3][base hour 4][three tag pairs 3+3 each]),
// a 2-byte second qualifier ((Δs<<4)|0x7) and an 8-byte big-endian value, in
// family "t" of table "tsdb". Points are taken in the generator's order (time,
// then series), so a 1,000-cell batch touches about 1,000 rows, as OpenTSDB's
// writes do. Raw Pebble stores the same cell under the key row‖qualifier.
//
// Reads: Preload writes rows of RowCells cells (one hour at 10 s); a one-row
// Get reads every cell of a row, a one-row Get into reused buffers does so
// with storage.Table.GetAppend into memory kept from read to read (as
// query/read does), a one-row Scan reads the same row through a
// [row, row+1) scan. Raw Pebble reads a row with a bounded iterator.
package storebench
