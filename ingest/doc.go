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
// can hold a point: an append may name a new series, but the commit
// registers the new series of all its points first, in one call when the
// registrar is a SeriesBatchRegistrar, and fails whole if that fails. A
// series the registrar does not know never holds a committed point, and
// NumSeries counts only registered series. A series gets a SeriesRef,
// valid for the life of the process and used as its id in the log. Its
// points live in open rows, one per hour [base, base+RowSpan) as
// OpenTSDB's rows are; each row records the oldest log segment holding one
// of its points and when its latest point arrived (for the flush grace).
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
// The stream's buffer always has 8 bytes of capacity past its last byte,
// so that the decoder loads a 64-bit word at any bit position without a
// bounds check; it checks the end once per point and discards a point
// that ran past it (only possible for bytes the encoder did not write).
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
// # Memory accounting and throttling
//
// MemoryBytes sums, per series, a fixed overhead and its key, and per row
// (open or being written) a fixed overhead, its chunk buffer's capacity and
// its out-of-order buffer's capacity: the figure HeadOptions.MaxMemory
// (tsd.storage.head.max_memory, default 2 GiB) is held to. Above it a
// commit wakes the flusher loop, which writes the oldest open rows early
// (Relieve: whole hours, oldest first, unpaced) down to 7/8 of the limit.
// Commit refuses points with a *ThrottleError (ErrThrottled, "Please
// throttle writes: head memory 2.1 GiB over limit 2 GiB") only while over
// the limit and either no flusher loop runs, the latest flush write failed,
// or memory is a quarter over the limit; refused points are not logged,
// so nothing acknowledged depends on the store.
//
// # Series limits
//
// HeadOptions.SeriesLimits bound the series written by name
// (NameAppender): distinct series in a sliding hour and a sliding day, and
// series per metric in the series index. A series is identified by its
// names (metric and tags sorted by key), hashed, and checked when it
// misses the appender's cache, before any of its new names gets a UID, so
// a refused series costs neither a UID nor head memory; past a limit its
// point is refused with a *SeriesLimitError (ErrSeriesLimit: bad data,
// never retryable) and its neighbours land. Each window cuts its span in
// four slots with one fixed-size Bloom filter each (plus the current
// slot's), so its memory is set by its limit alone, whatever clients send:
// a series counts from its first point until the slot of its last point
// leaves the window, 60 to 75 minutes for the hour, 24 to 30 hours for the
// day. A cached series is checked again only when a slot changes (the
// limiter's epoch), so a point of a known series costs one atomic load and
// no allocation. The per-metric limit counts the metric's series in the
// index plus the new ones other appenders have admitted and not yet
// committed.
//
// # Flush
//
// A Flusher writes complete rows to the data table: a row is complete when
// its hour is over and no point arrived for Grace (default 10 min), plus a
// per-series share of Spread (a hash of the key) so that the rows of one
// hour do not all come due together, and the writes are paced by a token
// bucket (RowsPerSecond, default 20,000 rows/s; not at shutdown or under
// memory pressure). Due rows are found through a per-hour index (every open
// row is listed under its hour), so a round looks only at hours that can be
// due rather than at every series.
//
// Each row is written in the table's format. dense: one put (Apply,
// BatchRows rows per call) of one dense column (rowkey.DenseEncoder; a row
// beyond rowkey.MaxDensePoints gets several), qualifier 0x80 | writer id |
// flush number, cell timestamp the flush time. opentsdb: OpenTSDB's
// compacted column (a plain single cell for one point), written with
// CheckAndPut expecting the qualifier absent; when another writer wrote
// that qualifier first the two are merged as a reader would (the newer cell
// wins a shared timestamp) and written expecting the other writer's exact
// value, retried while it keeps changing, so no writer's points are lost.
// Flush numbers come from FLUSHSEQ in the log directory, a 4-byte
// big-endian bound reserved 65,536 at a time (written, synced, renamed)
// before use, so they never repeat for the directory; the writer id comes
// from WRITERID (LoadWriterID).
//
// A row is moved from the series' open rows to its flushing rows before its
// write and dropped after it, so readers see it throughout (read the head
// before the store); if the write fails it goes back, merged with any
// points that arrived meanwhile (those win ties). A point arriving for a
// flushed hour opens a new row, flushed later as another column of the same
// row key; rowkey.RowDecoder merges them, the newer cell winning ties.
// After writing, the log segments below both the oldest segment any row
// still needs and the segment of every commit still in flight (commitMu)
// are deleted; a full flush (all=true, at shutdown) first rotates the log
// so every segment can go.
//
// # Compaction queue
//
// A column is queued for compaction when its row will hold others: the row
// was flushed before by this process (a late point; a 64-hour window per
// series remembers which), it was rebuilt from the log or put back after a
// failed write (its points may be stored already), or its hour is not
// complete yet (written early at shutdown or under memory pressure). The
// queue lives in the meta table, after the data write:
//
//	row 0x02 ‖ data row key, family q, qualifier = the data column's
//	qualifier, empty value, cell timestamp = the flush time
//
// so it survives a restart, and an entry always names a column written
// before it. A Compactor (its own loop, paced at RowsPerSecond, default
// 1,000) reads queued rows whose hour is complete, merges every data column
// (single, compacted, dense; appends, annotations and histograms are left
// alone) with rowkey.RowDecoder and writes one column in the table's
// format, whose cell timestamp is the newest folded cell's so that it ranks
// against later writes as that cell did. It deletes exactly the cell
// versions it read (DeleteColumn over [ts, ts+1ms)): dense in the same
// atomic row mutation as the put; opentsdb after a CheckAndPut expecting
// the version of the merged qualifier it read. Columns another writer adds
// meanwhile survive. Then it deletes the exact versions of the entries that
// name a column it read, or that are older than the read by Skew (their
// column is gone: the queue is read before the row and every column is
// written before its entry, so a column missing from the read was deleted;
// Skew, default 1 min, covers stores that order reads of two tables less
// strictly); newer entries stay for the next round. Cells that do not
// decode are left untouched. Drain (at shutdown) compacts every queued row
// unpaced with no skew, but keeps the entries of hours not yet over: more
// points may come for them after a restart, when this process no longer
// knows they were flushed.
//
// # Read-only (Gate)
//
// A Gate is the daemon's read-only state, with a reason: the store's
// refusal of writes (a disk under tsd.storage.min_free_bytes, or full) or
// the operator's mode. Every write path consults it: the protocol writer
// (ingest/service) refuses points before they resolve a name or reach the
// log, so nothing refused is acknowledged; the flusher, compactor and
// retention loops skip their rounds, keeping rows in the head and the log
// and entries in the queue, and the first round after the gate opens
// writes them. Acknowledged points stay in the log meanwhile, so a restart
// on a full disk replays them (the log opens without room for a new
// segment) and the flusher writes them once space is back.
//
// # Shutdown (SIGTERM)
//
// Stop accepting writes; Flusher.Stop and Compactor.Stop (and
// Retention.Stop); Flusher.Flush(ctx, now, true), which writes every row
// (partial ones queued) and deletes every log segment; Compactor.Drain;
// Head.Close; then the series index and the store. Anything not done by
// then is still in the log or the queue and is finished after the restart.
//
// # Names, writer id, retention
//
// NameAppender resolves names to series through uid.ResolvePoint and
// remembers series by name per connection. LoadWriterID keeps the daemon's
// writer id in WRITERID (8 hex digits) in the data directory. Retention
// deletes, for each metric a tsd.storage.retention rule expires
// (internal/retention), its rows whose whole hour is before the cutoff with
// one DeleteRange per salt bucket; readers filter the rest with the same
// rules.
//
// RebuildIndex (`tsd index rebuild`) scans a whole data table, an
// OpenTSDB one for example, and registers every series with the hours of
// its rows through index.RegisterMany, Batch series at a time, so its
// memory does not grow with the table. Rows of the all-zero metric (global
// annotations) are not series; a row whose key does not parse is logged,
// counted and skipped.
//
// # Restart
//
// OpenHead replays the log: series records recreate series (registering
// them again, one registrar call per record, so the registrar must be
// idempotent), samples records refill rows, delete records remove the
// points replayed so far in their range.
//
// # Delete
//
// DeleteRange (a query's delete=true) takes commitMu exclusively, logs a
// synced delete record (series keys and an inclusive time range) and
// removes the range's points from the series' open rows, re-encoding each
// row's chunk and dropping rows left empty with their hour entries; holding
// commitMu orders the delete against every commit identically in the log
// and in the head, so points written after the delete survive it and a
// replay. It then waits, without the lock, until no row of those series
// overlapping the range is being written, so the caller's delete of the
// stored rows afterwards catches whatever a flush was writing.
package ingest
