// Package fsck checks the data table and the series index, and repairs
// what can be repaired: tsd fsck, OpenTSDB's tsdb fsck with tsd's own
// checks.
//
// Check scans the data table's rows (all of it, or the hours of
// [Start, End] of some metrics, bucket by bucket) and judges every cell's
// bytes itself, where query/read's decoder would skip what it cannot read
// and merge what it can: fsck's business is exactly what a reader hides.
// Each finding has a Kind:
//
//	bad_key             the row key does not parse (length, tag order, base time)
//	bad_salt            the salt bytes are not the series' bucket: a Get never finds the row
//	unknown_uid         a UID above its kind's max id: never assigned
//	orphan_row          a UID at or below the max id with no name: deleted (tsd uid delete)
//	bad_qualifier       a data column whose qualifier does not parse, or of no kind tsd knows
//	bad_value_length    a single cell whose value length disagrees with its flags
//	bad_compacted       a compacted (or appends) column whose qualifiers and values disagree
//	duplicate           a timestamp held more than once in the row's columns
//	bad_dense           a tsd dense column that does not decode
//	missing_index       a row whose series the index does not list, or whose hour its span misses
//	index_without_rows  an index entry with no row (whole-table checks only)
//
// # Repairs (Options.Fix)
//
// What no reader can read is removed: rows with bad keys, orphan and
// unknown UIDs are deleted (OpenTSDB's --delete-bad-rows and
// --delete-orphans), bad qualifiers, bad compacted and dense columns are
// deleted. What reads through a repair is rewritten: a value of the wrong
// length gets OpenTSDB's fix (rowkey.FixSingle) in place, a row under the
// wrong salt moves to its right key, a missing or narrow index entry is
// registered. Duplicates are rewritten only with ResolveDuplicates too:
// the row's data columns become one column in the store's format holding
// what tsd reads (rowkey.RowDecoder: the last write wins). Index entries
// without rows are reported but never removed (the index has no removal;
// such an entry costs a lookup, never a wrong answer). A repair that
// fails is counted and reported with its error; the check goes on.
//
// Rows whose points are still only in a daemon's write-ahead log are not
// in the table: run fsck on a store whose daemon stopped cleanly.
package fsck
