// Package tsmeta keeps OpenTSDB 2.4's TSMeta for every series: what users
// write about a series (description, display name, notes, custom pairs,
// units, data type, retention, max, min) and what the daemon tracks (when
// the series was created, when a point last arrived, how many points it
// has), in tsd's meta table, so the fields survive restarts and work on
// every engine.
//
// # Cells
//
// One row per series, family m (schema.MetaFamilyTSMeta):
//
//	row 0x03 ‖ TSUID   qualifier   value
//	                   ts_meta     the user's fields as JSON, OpenTSDB's storage order (TSMeta.getStorageJSON):
//	                               tsuid, displayName, description, notes, created, custom, units, dataType,
//	                               retention, max, min; NaN as "NaN"
//	                   ts_ctr      8-byte big-endian 1: the series is tracked (TrackLast)
//	                   ts_ctr.‖W   8-byte big-endian count of the points daemon W (its 4-byte writer id) flushed
//	                   ts_last     8-byte big-endian arrival of the latest point, Unix ms; cell timestamp = that ms
//	                   ts_created  8-byte big-endian creation, Unix s; cell timestamp = (2^40 − s) ms
//
// The family keeps one version and a read returns the newest timestamp,
// so ts_last keeps the latest arrival and ts_created the earliest
// creation, whatever order daemons write them in; neither needs a read
// before its write. Each daemon counts in a cell of its own, which only it
// reads and rewrites, so the count needs no atomic increment (a synced
// write per series on the embedded engine, a round trip on Bigtable) and
// goes into the batch's one write; totalDatapoints is the sum of the
// daemons' cells, or ts_ctr's 1 when none counts. ts_meta is replaced with a check-and-put against the
// bytes read (Update), so concurrent updates never lose each other's
// fields.
//
// # Tracking
//
// Track is called by the flusher once per batch of flushed rows, never per
// point, so the ingest path does no work for it. Its Mode follows
// OpenTSDB's keys: TrackLast (tsd.core.meta.enable_tsuid_tracking alone)
// writes ts_ctr as 1 and the arrival; TrackCount (enable_tsuid_incrementing
// or enable_realtime_ts) reads the daemon's count of each series in the
// batch (8 reads in flight) and writes it back increased by the batch's
// points, with the arrival and the creation, in one Apply. The counts are
// written after the rows are in the data table: a crash between the two
// loses that batch's count, and a row written twice (put back after a
// failed write) is counted twice.
//
// # Where tsd differs from OpenTSDB
//
// OpenTSDB answers only for series tracking created; tsd's TSMeta exists
// for every series of the series index (the callers decide), with zero
// counters when tracking is off. The counters lag the points by the flush
// (up to an hour and the flush grace), since they are kept per flushed
// row.
package tsmeta
