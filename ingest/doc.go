// Package ingest is tsd's write path. This file documents the head: the
// in-memory store of open hour rows behind the write-ahead log (package
// ingest/wal documents the log's byte format).
//
// # Series and rows
//
// A series is named by its key: metric UID ‖ tagk UID ‖ tagv UID ..., tags
// sorted by tagk UID bytes, widths from series.Widths (default 3 bytes
// each), at most MaxTags tags; the head checks the shape when it creates a
// series and calls the SeriesRegistrar (the series index) before the series
// can hold a point. A series gets a SeriesRef, valid for the life of the
// process and used as its id in the log. Its points live in open rows, one
// per hour [base, base+RowSpan) as OpenTSDB's rows are; each row records the
// oldest log segment holding one of its points and when its latest point
// arrived (for the flush grace).
//
// # Row chunk format (memory only, never stored)
//
// The in-order part of a row is a bit stream, most significant bit first.
// The first point: its offset from the row base (22 bits), its kind
// (2 bits: 0 int, 1 float32, 2 float64) and its value bits raw (64 bits).
// Each later point, with a timestamp strictly after the previous one:
//
//	timestamp  delta of delta, bucketed: '0' = 0, '10' + 7 bits,
//	           '110' + 12 bits, '1110' + 17 bits, '1111' + 25 bits
//	           (two's complement)
//	kind       '0' same kind as the previous point, or '1' + 2 bits kind
//	           followed by the value raw (64 bits), starting a new run
//	value      int: the delta from the previous value, bucketed as above
//	           with widths 2, 6, 20, 64 bits.
//	           float32/float64: XOR with the previous value's float64
//	           bits: '0' equal; '10' + the bits inside the previous
//	           window; '11' + leading zeros (5 bits, at most 31) +
//	           significant bits - 1 (6 bits) + the significant bits.
//
// A point at or before the row's newest timestamp goes to a sorted
// out-of-order buffer, where a later write of one timestamp replaces an
// earlier one; reads merge buffer and chunk, the buffer winning a tie; at
// 32 points the buffer is merged into a re-encoded chunk.
//
// # Append path and durability
//
// An Appender collects points (by SeriesRef, or by key, creating the
// series) and Commit encodes them as log records (series records for
// series not yet defined in the current segment, then samples), appends
// them to the log with group commit, and only after the log write adds
// them to their rows. A commit is acknowledged once its records are in
// the log file (the OS page cache), or synced when asked. Two commits that
// write one series and timestamp concurrently may reach the head and the
// log in different orders; which value a restart keeps is then either.
//
// Series are found by key in padded, hash-selected shards under read
// locks, and by ref in a lock-free paged table; a commit locks only the
// series it touches, one at a time, and allocates nothing in steady state
// (row buffers are sized from the series' previous row).
//
// # Memory accounting
//
// MemoryBytes sums, per series, a fixed overhead and its key, and per row
// a fixed overhead, its chunk buffer's capacity and its out-of-order
// buffer's capacity: the figure the head.max_memory limit is held to.
//
// # Flush
//
// A Flusher writes complete rows to the data table: a row is complete when
// its hour is over and no point arrived for Grace (default 10 min), plus a
// per-series share of Spread (a hash of the key) so that the rows of one hour
// do not all come due together. Each row is written with one put (Apply,
// BatchRows rows per call) as one dense column (rowkey.DenseEncoder; a row
// beyond rowkey.MaxDensePoints gets several), qualifier 0x80 | writer id |
// flush number, cell timestamp the flush time. Flush numbers come from
// FLUSHSEQ in the log directory, a 4-byte big-endian bound reserved 65,536
// at a time (written, synced, renamed) before use, so they never repeat for
// the directory. A row is taken out of the head before its write; if the
// write fails it goes back, merged with any points that arrived meanwhile
// (those win ties). A point arriving for a flushed hour opens a new row,
// flushed later as another column of the same row key; rowkey.RowDecoder
// merges them, the newer cell winning ties. After writing, the log segments
// below both the oldest segment any row still needs and the segment of
// every commit still in flight (commitMu) are deleted; a full flush
// (all=true, at shutdown) first rotates the log so every segment can go.
//
// # Restart
//
// OpenHead replays the log: series records recreate series (registering
// them again, so the registrar must be idempotent), samples records refill
// rows. A damaged log tail is dropped with a warning (see ingest/wal).
package ingest
