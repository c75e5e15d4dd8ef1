// Command tsdsize reports what a data directory costs on disk: bytes and
// bytes per point for data, index, log and the whole directory.
//
// Usage:
//
//	tsdsize -kind tsd -points 8640000 ./data          # a stopped tsd's store (compacted first)
//	tsdsize -kind prometheus /var/lib/prometheus     # a data dir or one block (points from meta.json)
//	tsdsize -kind pebble -points N DIR               # any raw Pebble directory
//
// For -kind tsd the store is opened with storage/pebble, so the daemon must be
// stopped; it is compacted first (unless -compact=false) and its sstable bytes
// are split between the data tables (-data-tables, default tsdb) and every
// other table (UIDs, the series index) by their logical bytes; see package
// bench/dirsize.
package main
