// Package head is the write path's in-memory head: the open hour rows of
// every series, behind the write-ahead log (package ingest/wal documents
// the log's byte format). Appends commit to the log and then to the rows;
// readers (query/read, through its own Head interface) see every
// committed point until the store holds it. The flusher and compactor
// that move rows into the store live in ingest/flush, which reads the
// head through the flush side of its API (TakeHours, DetachRow, FinishRow,
// Reinstate, TruncateLog, ...); the head never imports them.
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
// (2 bits: 0 int, 1 float32, 2 float64; 3 marks a millisecond point,
// series.Point.Ms, and 2 bits of kind follow) and its value bits raw (64
// bits).
// Each later point, with a timestamp strictly after the previous one:
//
//	timestamp  delta of delta, bucketed: '0' = 0, '10' + 7 bits,
//	           '110' + 12 bits, '1110' + 17 bits, '1111' + 25 bits
//	           (two's complement)
//	kind       '0' same kind (and millisecond mark) as the previous point,
//	           or '1' + the kind code as for the first point, followed by
//	           the value raw (64 bits), starting a new run
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
// An integer point at the same interval whose value moved by a 0-, 2- or
// 6-bit bucket (most points of a gauge) is one code of at most 11 bits,
// which the decoder reads from a 4096-entry table, several points per
// 64-bit load (chunk.go, intRun).
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
// commit wakes the flusher loop (ingest/flush), which writes the oldest
// open rows early (Flusher.Relieve: whole hours, oldest first, unpaced)
// down to 7/8 of the limit.
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
// four slots (plus the current one) and maps each series hash to the slot
// of its last point, so it counts exactly and its memory is bounded by its
// limit, whatever clients send (about 20 bytes per series counted):
// a series counts from its first point until the slot of its last point
// leaves the window, 60 to 75 minutes for the hour, 24 to 30 hours for the
// day. A cached series is checked again only when a slot changes (the
// limiter's epoch), so a point of a known series costs one atomic load and
// no allocation. The per-metric limit counts the metric's series in the
// index plus the new ones other appenders have admitted and not yet
// committed.
//
// # Names
//
// NameAppender resolves names to series through uid.ResolvePoint and
// remembers series by name per connection, deferring the assignment of new
// names so that many are assigned in one batch. A series appended with a
// decoder's Key (parse.Point.Key: remote write's label bytes) is
// remembered under that Key instead, and found by it alone (AppendKnown),
// its names never read again.
//
// # The flush side
//
// The flusher takes the entries of the hours it looks at from the hour
// index (TakeHours: every open row is listed under its hour, so a round
// looks only at hours that can be due), and detaches each due row
// (DetachRow): the row moves from the series' open rows to its flushing
// rows before its write and is dropped after it (FinishRow), so readers
// see it throughout (read the head before the store); if the write fails
// it goes back (Reinstate), merged with any points that arrived meanwhile
// (those win ties). A point arriving for a flushed hour opens a new row,
// flushed later as another column of the same row key. A detached row is
// Late, and its column must be queued for compaction, when the store may
// hold points of its hour already: this process flushed that hour before
// (a 64-hour window per series remembers which; an hour older than the
// series' newest flushed one by 64 hours or more counts as flushed, since
// the window forgot it), the row was rebuilt from
// the log or put back after a failed write, or its hour ended before the
// head was opened. After writing, TruncateLog deletes the log segments
// below both the oldest segment any row still needs and the segment of
// every commit still in flight (commitMu); RotateLog lets a full flush
// delete every segment.
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
package head
