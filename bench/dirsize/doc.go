// Package dirsize reports what a time-series data directory costs on disk:
// bytes per point for the data, the index and the whole directory, for a
// Prometheus data or block directory, a raw Pebble directory and a tsd store.
//
// Classes:
//
//   - Prometheus: chunks/ and chunks_head/ files are data, index files are
//     index, wal/ and wbl/ are the log, the rest (meta.json, tombstones,
//     lock) is other. Points are the numSamples of every block's meta.json.
//   - Pebble: *.sst is data (sstables hold their own index and filter
//     blocks), *.log the log, MANIFEST/OPTIONS/marker files other.
//   - tsd (storage/pebble): the store is compacted first; the sstable bytes
//     are then split between data (the data tables, default "tsdb") and index
//     (every other table: tsdb-uid, tsdb-meta with its series index) in
//     proportion to each table's logical bytes (row + family + qualifier +
//     8-byte timestamp + value of every cell, read through the storage
//     contract). The split is an estimate; Total is exact.
package dirsize
