// Package schema owns a store's settings record: the choices fixed when the
// first daemon creates a store (write format, salt width and buckets, UID
// widths), the names and layouts of the tables that hold them, and the
// check every later start makes against them. It is a leaf: it imports the
// storage contract (it reads and writes one row of the meta table), salt
// (the salt defaults and bounds) and series (the UID widths), and no
// package below those imports it. The UID table's own rows belong to
// package uid, the series index's to uid/index, the data rows to rowkey;
// docs/formats.md describes every table's bytes together.
//
// # Tables
//
// A store is three tables (tsd.storage.hbase.data_table, uid_table and
// meta_table):
//
//	default      families          holds
//	"tsdb"       t                 data points, one row per series and hour (DataTableSpec)
//	"tsdb-uid"   id, name          UID maps and MAXID counters (uid.TableSpec)
//	"tsdb-meta"  r, x, q, m        the settings record, the series index, rows awaiting compaction, TSMeta (MetaTableSpec)
//
// Every family keeps one version and no TTL. The first two are OpenTSDB
// 2.4's and may be shared with OpenTSDB daemons; the meta table is tsd's.
//
// # The meta table
//
// Every family is tsd's and every access names its family, so OpenTSDB
// TSMeta cells (family "name") in a shared table are never read or
// deleted; and nothing ever deletes a row range here, because TSMeta row
// keys (TSUIDs) may share prefixes with tsd's rows.
//
//	row                          family  qualifier        value
//	0x00 "record"                r       version          "1"
//	                             r       format           "dense" | "opentsdb"
//	                             r       salt.width       decimal ASCII, 0..8
//	                             r       salt.buckets     decimal ASCII, >= 1
//	                             r       uid.width.metric decimal ASCII, 1..8
//	                             r       uid.width.tagk   decimal ASCII, 1..8
//	                             r       uid.width.tagv   decimal ASCII, 1..8
//	                             r       rollups          rollup configuration, OpenTSDB's JSON (optional)
//	0x00 "series_id"             x       max              8-byte big-endian series-id counter   (uid/index)
//	0x01 ‖ …                     x       …                series index rows                     (uid/index)
//	0x02 ‖ data row key          q       …                a data row awaiting compaction        (the write path)
//	0x03 ‖ TSUID                 m       …                the series' TSMeta and counters       (uid/tsmeta)
//
// # The settings record
//
// The record is the row 0x00 "record" of family r: seven cells whose
// qualifiers are the configuration keys without "tsd.storage." and whose
// values are text, as in the table above (decimal without sign or leading
// zeros; the format by name). Readers read the whole family and ignore
// cells they do not know, so a later setting (the rollup intervals) is a
// new qualifier, and "version" changes only if an existing cell changes
// meaning. A record missing one of the six settings, or holding a value
// that does not parse, is a *storage.CorruptionError naming the cell.
//
// The rollups cell is the exception: it holds the rollup configuration
// (tsd.rollups.config) the store's rollup tables were written with, and
// it may be rewritten, by a check-and-put expecting the value read, when a
// daemon adds an interval (ReadRollups, WriteRollups); whether a change
// is allowed (adding intervals only) is the caller's rule.
//
// Invariants:
//   - The record is written once, before the first UID is assigned, with a
//     check-and-put that expects "version" absent: of two daemons starting
//     together one writes it and the other checks against it.
//   - It is never overwritten. `tsd repair` may write back a record that
//     repairing a damaged store lost (WriteRecord, still expecting
//     "version" absent).
//
// At start, EnsureRecord compares the configured settings with the record:
// a setting given explicitly (Settings.Given) that differs is a
// *SettingError naming the setting and both values; settings not given
// take the record's values. A store without a record whose UID table holds
// OpenTSDB data (a MAXID row, found by the OpenTSDBProbe package uid
// provides) is refused with ErrUnrecordedOpenTSDB until
// tsd.storage.format=opentsdb and both salt settings are given explicitly;
// then they are recorded. A new store takes DefaultSettings for what is not
// given: format dense, salt width 1 with 20 buckets (salt's defaults), UID
// widths 3 (series').
package schema
