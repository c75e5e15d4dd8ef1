// Package flush moves the head's rows into the store and keeps them there:
// the Flusher writes complete hour rows from the head (ingest/head) to the
// data table, the Compactor merges the columns of rows that got several,
// and Retention deletes expired rows. Each runs as a loop the daemon
// starts and stops (cmd/tsd), paused while the daemon is read-only
// (ingest.Gate). The package reads the head only through what the head
// exports for it; the head does not import this package.
//
// # Flush
//
// A Flusher writes complete rows to the data table: a row is complete when
// its hour is over and no point arrived for Grace (default 10 min), plus a
// per-series share of Spread (a hash of the key) so that the rows of one
// hour do not all come due together, and the writes are paced by a token
// bucket (RowsPerSecond, default 20,000 rows/s; not at shutdown or under
// memory pressure). Due rows are found through the head's per-hour index
// (every open row is listed under its hour), so a round looks only at
// hours that can be due rather than at every series. A round also keeps
// the earliest time any row it left can come due; until then, and while
// the head has listed no row since (Head.ListedRows: rows opened, rows
// put back), the next rounds look at nothing. Without that, backfilled
// history, whose hours are all past but whose rows wait out the grace
// after their last point, was taken and given back whole every round:
// about 10 ms a round for a day of 1,000 series, in the middle of
// whatever queries ran (flush_quiet.go).
//
// Each row is written in the table's format. dense: one put (Apply,
// BatchRows rows per call) of one dense column (rowkey.DenseEncoder; a row
// beyond rowkey.MaxDensePoints gets several), qualifier 0x80 | writer id |
// flush number. opentsdb: OpenTSDB's compacted column (a plain single
// cell for one point), written with CheckAndPut expecting the qualifier
// absent; when another writer wrote that qualifier first the two are
// merged as a reader would (the newer cell wins a shared timestamp) and
// written expecting the other writer's exact value, retried while it keeps
// changing, so no writer's points are lost. Either way the cell timestamp
// is the arrival of the row's latest point (the flush time for a row
// rebuilt from the log, or one a skewed clock stamped later), so that
// where two daemons wrote one timestamp readers keep the value that
// arrived last, whichever daemon flushes last. Flush numbers come from
// FLUSHSEQ in the log directory, a 4-byte big-endian bound reserved 65,536
// at a time (written, synced, renamed) before use, so they never repeat
// for the directory; the writer id comes from WRITERID (LoadWriterID).
// The rows of one batch share a flush number (their first columns do: a
// row's further columns, and a row the batch holds twice, take their own),
// since it only has to tell the columns of one row apart, and a number
// repeated through a block of keys costs next to nothing once compressed.
//
// Rows are taken from the head through its flush side (ingest/head
// documents it): detached before their write, so readers still see them,
// finished after it, put back if it fails. Before a dense batch's rows are
// finished, FlushOptions.Moved hears of each row written as one column,
// with the fingerprint readers listed it under in the head
// (head.DetachedRow.FP): query/read keeps the points it had decoded from
// the head as the stored row's. A point arriving for a flushed
// hour opens a new row, flushed later as another column of the same row
// key; rowkey.RowDecoder merges them, the newer cell winning ties. After
// writing, the head deletes the log segments no row and no commit in
// flight still needs; a full flush (all=true, at shutdown) first rotates
// the log so every segment can go.
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
// # Read, fold, rewrite
//
// The compactor's work on one stored row is apart from its queue
// (fold.go): read the row's data columns, decode and merge their points
// with rowkey.RowDecoder, rewrite them as one column in the table's format
// and delete exactly the cell versions read. The queue only says which
// rows to fold and when.
//
// # Rollups
//
// With FlushOptions.Rollups, every raw row the flusher writes and every
// row the compactor reads gets its rollup cells rewritten (rollup.go,
// formats in package rollup): the cells of each configured interval that
// divides an hour are folded from the row's full set of points, and the
// cell of each longer interval that holds the hour (a day) is folded from
// the stored cells of the longest computed interval dividing it (its
// hours). A cell is always recomputed from raw points and written whole,
// never incremented, so a replay, a retry or a second compaction of a row
// writes the same cells.
//
// The full set of points: the head's points of the row when its column
// is the only one of its row: not queued for compaction (the head counts
// an hour older than its 64-hour memory of a series' flushed rows as
// flushed), its hour begun after this flusher started and after every
// hour an earlier process of the log directory wrote (FLUSHTOP, below:
// one may have flushed a later hour early, at shutdown or for a client
// whose clock runs ahead), and within 60 hours of now; otherwise the row
// is read back from the data table after the write and decoded as
// readers do. FLUSHTOP is an 8-byte big-endian bound (Unix ms) on the
// end of every hour a flush of the directory wrote, with the CRC-32C of
// those bytes, moved up (written, synced, renamed) before a batch holding
// a later hour is written: about once an hour, so the common case, a
// fresh hour flushed once, costs no read. A damaged FLUSHTOP makes the
// flusher read every row back until the next restart. The compactor uses the points it
// merged. The rollups of a batch are written after its data and before its
// rows leave the head; if they fail the batch fails, its rows go back and
// are written again as possibly stored (queued), so their cells are
// computed again.
//
// A sole writer (RollupOptions.SoleWriter: the daemon on its own Pebble
// store) in the dense format keeps the 1h rows it wrote last in memory
// (rollup_cache.go; CacheRows, default 65,536 rows, at most about 40
// MiB), so a flushed hour is folded into its day without a read: a row
// missing from the cache is read once. An hour that follows every cell
// of its cached row is appended without parsing the row, and the day's
// cell folded from the row's cached fold and the new hour (exactly what
// folding every hour gives). The batch's raw columns, its 1h cells and
// its day cells go to the store in one storage.ApplyGroup (one commit
// and one sync on Pebble), unless a row of the batch is folded from its
// stored row, whose new column is then written first. An open day's hours are written
// as cell columns; when the row's last hour is written, or an hour lands
// in a row already packed, the row is written whole as one packed
// column, its cell columns deleted in the same row mutation. Nothing is
// read back after the write: with no other writer, what it wrote is what
// is stored. If a write fails, the rows it touched leave the cache.
// A sole writer also leaves the cell of a longer interval (a day) to the
// flush of the last row the head holds in its range: a flushed hour whose
// day still has a row in the head writes its 1h cells only, and the
// day's cell is folded when that day's last head row is flushed (with the
// head's rows of the day detached in the same batch, or none left), so a
// day in steady flushing, or a bulk load, costs one write of its cell,
// not one per hour. Readers read a range raw while the head holds a row
// in it (query/read, VisitCells), so the older cell is never read
// meanwhile, and once the head holds none the cell is exact. A row
// deleted from the head (a query's delete=true) is not flushed; rollup
// cells are not kept in step with deletes in any case.
// /api/rollup writes its columns beside the cache: an hour written there
// after its row entered the cache, for a series with no raw points in
// that hour, reaches the day cell only once the row is read again (a
// restart, an eviction, or tsd rollup rebuild).
// Otherwise (Bigtable, or the opentsdb format):
//
// Each cell is written blindly as its own columns (dense: one cell
// column; opentsdb: four, every other width of them deleted in the same
// mutation), a batch's cells in one Apply per table, so the cost is two
// store writes per flushed batch and a read of the day's hours per row.
// A sole writer in the opentsdb format reads each rollup row it rewrites
// first (one more row read per rollup row) and deletes only the other
// widths present: Pebble makes each all-version column delete a range
// tombstone, and the blind ones (about 23 per cell) piled up in the
// memtable, every new iterator fragmenting them all, so reads slowed
// with each rollup row written (BenchmarkRollupReadsAfterOpenTSDBFlush:
// reads about 9x slower after 4,800 rows). With other writers the
// deletes stay blind, so that a column another writer gave another
// width meanwhile cannot survive the last write.
// What was computed from stored rows (a raw row read back, a day folded
// from its hours) is read again after the write and written again if it
// changed, which makes concurrent writers (another daemon, or the
// compactor) converge: the last write of a cell was computed from its
// final inputs (writeJobs in rollup.go argues it). Columns written through
// /api/rollup for the same series, interval and aggregator are overwritten
// (opentsdb) or shadowed by the cell column (dense); other aggregators'
// columns are left alone.
//
// # Rebuilding rollups
//
// RebuildRollups (rebuild.go, `tsd rollup rebuild`) computes the cells of
// raw rows already stored: a store written before rollups or with them
// off, an adopted OpenTSDB table, an interval added to the configuration.
// It scans each metric's rows salt bucket by salt bucket over the hours
// asked and hands them to the rollup writer as the compactor does (the
// row read, its cells written whole, the day folded from the stored hours,
// inputs read again after the write), so it is idempotent and safe beside
// a running writer. Its checkpoint, the last finished step (salt bucket,
// metric, hour), is a column of the meta table's record row family r:
//
//	row "\x00rollup_rebuild", qualifier "<start>-<end>-<fnv64 of metrics
//	and intervals, 16 hex>", value "<bucket> <metric uid hex> <hour s>"
//
// recorded at the end of an hour at most once a second and at the end of
// every metric; a rerun of the same job continues after it, and it is
// deleted when the job ends.
//
// # Retention
//
// Retention deletes, for each metric a tsd.storage.retention rule expires
// (internal/retention), its rows whose whole hour is before the cutoff with
// one DeleteRange per salt bucket; readers filter the rest with the same
// rules. It lives here, not in a package of its own, because it is one of
// the store maintenance loops the daemon runs beside the flusher and the
// compactor: started and stopped with them, paused by the same gate, and
// writing the same data table.
//
// # Writer id
//
// LoadWriterID keeps the daemon's writer id in WRITERID in the data
// directory; dense qualifiers carry it. WRITERID and FLUSHSEQ hold their
// value twice, each copy with its CRC-32C (guarded.go), so one damaged
// byte neither stops the daemon nor changes the value unseen.
//
// # Shutdown order (SIGTERM)
//
// Stop accepting writes; Flusher.Stop and Compactor.Stop (and
// Retention.Stop); Flusher.Flush(ctx, now, true), which writes every row
// (partial ones queued) and deletes every log segment; Compactor.Drain;
// Head.Close; then the series index and the store. Anything not done by
// then is still in the log or the queue and is finished after the restart.
package flush
