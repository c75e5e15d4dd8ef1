// Package annotation stores OpenTSDB 2.4 annotations (notes on a series or
// on everything, "global") in the data table, byte for byte where OpenTSDB
// puts them (its src/meta/Annotation.java; docs/formats.md, Annotations),
// so a table shared with OpenTSDB daemons reads the same notes either way.
//
// # Times
//
// An annotation's startTime and endTime are kept as given: seconds, or
// milliseconds when any of the upper 32 bits are set (OpenTSDB's
// SECOND_MASK rule, the same as for points). The HTTP query-string form
// always yields seconds (OpenTSDB divides the parsed time by 1000); a JSON
// body may carry either. Store methods that take a range (Range,
// DeleteRange) take milliseconds.
//
// # Cells
//
// A series annotation lives in the series' own data row for the hour of
// its start time: the row key is rowkey.Layout.AppendRowKeyFromTSUID, salt
// included. A global annotation lives in the zero-metric row of that hour,
// rowkey.Layout.AppendGlobalAnnotationRowKey: zero salt bytes, zero metric
// UID, base time, no tags. OpenTSDB 2.4 never salts that row (it has room
// for the salt but leaves it zero), so global annotations form one
// contiguous key range and a global Range is one scan, not one per bucket.
//
// Family t. Qualifier 01 followed by the offset from the row's base time:
//
//	start in seconds:       01 | uint16 offset in seconds    (3 bytes)
//	start in milliseconds:  01 | uint32 offset in ms         (5 bytes)
//
// The form follows the unit of the start time, not the value: a start of
// 1388450562000 (ms) gets the 5-byte form even though it is a whole second,
// as in OpenTSDB, so it is a different cell from a start of 1388450562.
// Worked example: 1292148123 (s) is in row 1292148000, qualifier 01007B.
// Odd qualifier lengths are not data points, so point decoders
// (rowkey.RowDecoder) skip these cells.
//
// The value is UTF-8 JSON in OpenTSDB's storage field order (its
// getStorageJSON): tsuid (left out when empty), startTime, endTime,
// description, notes, custom (null when absent). AppendStorageJSON writes
// it; Decode reads any field order, ignores unknown fields, and accepts
// numbers given as strings, as Jackson does. The HTTP form (AppendJSON)
// has Jackson's bean order instead: tsuid, description, notes, custom
// (left out when null), startTime, endTime. Custom keys are written in
// sorted order (OpenTSDB's HashMap order cannot be reproduced).
//
// # Updates
//
// Put merges like OpenTSDB's syncToStorage: it reads the stored cell, keeps
// the stored value of every field the caller did not set (Annotation.Given)
// unless overwrite (HTTP PUT) is asked, and writes with CheckAndPut against
// the bytes it read, retrying a few times on a conflict. A Put that sets
// nothing is ErrNoChanges (HTTP 304), as in OpenTSDB.
//
// # Where tsd differs
//
//   - A global Range keeps annotations by start time in [start, end];
//     OpenTSDB 2.4 also drops those whose endTime is past the range end and
//     parses the row's first cell for every column (a bug).
//   - DeleteRange includes the last hour row of the range; OpenTSDB's scan
//     stops before it.
//   - A cell that does not decode is skipped and counted (Store.Corrupt)
//     rather than failing the whole read.
package annotation
