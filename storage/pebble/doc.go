// Package pebble is tsd's embedded storage engine: the storage contract
// (storage.DB, storage.Table, storage.Scanner) on one
// github.com/cockroachdb/pebble/v2 database.
//
// # Key layout
//
// The first byte of every pebble key says what it holds:
//
//	0x01 name                      catalog entry of table "name"
//	0x02 "next-table-id"           4-byte big-endian id the next table gets
//	id row* family 0x00 qualifier* ^ms
//	                               one cell version (first byte 0x10..0xF4)
//
// id is the table id coded to preserve order: ids up to 0xDF are the single
// byte 0x10+id, larger ids are 0xF0+n followed by n minimal big-endian bytes
// (n = 1..4). Ids are never reused, so a dropped table's range deletion
// cannot touch a newer table.
//
// x* is the field coding of x: each byte b below 0xFE is written b+1, 0xFE
// is written 0xFF 0x00 and 0xFF is written 0xFF 0x01, and a single 0x00 ends
// the field. 0x00 is never the first byte of a code and 0xFF always is, so a
// 0x00 not preceded by 0xFF is a terminator. The terminator sorts below every
// continuation, so a field is never a prefix of another and the bytewise
// order of coded fields is the bytewise order of the raw values ("a" <
// "a\x00" < "a\x01" < "ab" < "\xfe" < "\xff"). OpenTSDB row keys are full
// of 0x00 (small UIDs) and free of 0xFE/0xFF, so they cost one byte more than
// their length.
//
// Family names never contain 0x00, so a single 0x00 ends them. ^ms is the
// timestamp in milliseconds (the contract's timestamps are whole
// milliseconds) subtracted from 2^56-1, as 7 big-endian bytes, so newer
// versions sort first; (2^63-1)/1000 < 2^56. Sorting keys bytewise thus
// orders cells by row, family, qualifier and timestamp descending, which is
// the contract's order, and a scan is a plain pebble iteration. A 26-byte
// OpenTSDB row, family "t" and a 2-byte qualifier make a 40-byte key in
// tables with ids up to 0xDF.
//
// The value of a cell key is the raw cell value.
//
// The catalog value of a table is
//
//	0x01 (version) | id u32 BE | uvarint n | n × (uvarint len | name | uvarint MaxVersions | uvarint TTL ns)
//
// The catalog has a copy beside the store, the file TSD-CATALOG, written
// (temporary file, sync, rename, directory sync) whenever a table is
// created, changed or dropped, and at Open when it differs:
//
//	"tsd-catalog" 0x01 | uvarint next table id | uvarint n |
//	n × (uvarint len | name | uvarint len | catalog value) | CRC32C u32 LE
//
// entries in name order, the checksum over everything before it.
//
// # Damaged sstables
//
// Pebble checks each block's checksum when it reads it. A damaged block is
// reported to the store (pebble's DataCorruption event, whose default
// handler would call Fatalf) instead of stopping the process: the store
// records the file and its key range, logs one error line naming both (by
// table and row), and goes on serving. Reads that meet the damage fail with
// a *DamageError naming the file and its key range (storage.ErrCorruption),
// inside a *storage.DamagedRangeError giving the rows of the read's table
// that the file's range covers, so a reader can read on past them;
// writes whose keys fall in the range are refused with one, as retryable,
// since they could not be compacted and repairing the store rebuilds that
// range; compactions that meet it fail, are logged at warning level and
// retried by pebble (a warning a minute a file); Compact refuses to run.
// Table statistics are off while an sstable in the directory cannot be
// opened: pebble would retry loading them at once and forever. Damage is
// found where pebble
// reads, so a file shows up once a read or a compaction has touched its
// damaged block. When the catalog itself cannot be read, Open takes it from
// its copy.
//
// Repair (for a stopped store) verifies every block of every sstable and
// rebuilds the key span of each damaged one, widened to whole rows (pebble
// excises only at row prefixes) and joined with overlapping ones: it reads
// the span's visible cells through pebble, forward until the damage stops
// it, backward from the span's end to the first cell above the damage, and
// forward again from there; then it excises the span from every level and
// ingests what it read in one step. Only the cells between the last read
// before a damaged block and the first read after it are lost, whatever
// level held them (several damaged blocks close together are stepped over
// as one); cells written after the damage elsewhere in the span are kept.
// Catalog entries and the id counter the rebuild lost are written back from
// the catalog copy.
//
// # Damaged log, options file and manifest
//
// Pebble refuses to open when a record of its log is damaged (its WAL
// sync chunks tell damage from the torn end of a crash). Open then
// salvages the log (logsalvage.go): every intact record is written back as
// the same log, the damaged records are dropped, the original is kept as
// NNNNNN.log.damaged, and pebble opens again; DB.SalvagedLogs reports it.
// The store stays at pebble's newest format for this: earlier formats
// take a damaged record for the log's end and drop everything after it
// without a word. A damaged OPTIONS file, which pebble also refuses, is
// set aside as OPTIONS-NNNNNN.damaged and pebble writes a new one: it only
// repeats the options Open passes, and the MANIFEST names the comparer.
// The MANIFEST is read before pebble reads it: pebble takes a damaged
// record there for a torn end and would open the store without, and
// delete, the sstables the later records list. A copy kept beside it
// (TSD-MANIFEST-NNNNNN, manifestmirror.go) mends it; without a copy that
// reaches the damage, a damaged record with a whole record after it
// refuses the store (manifestcheck.go).
//
// # Prefixes and bloom filters
//
// The store uses its own pebble Comparer ("tsd.storage.rowsplit.v2"): keys
// compare bytewise, and Split ends a data key's prefix after its row field,
// so pebble's bloom filters answer "does this row exist" (read-modify-write
// uses a prefix seek; Get uses a bounded iterator, which measured faster;
// a one-row Scan [row, row‖0x00) gets Get's bound, the successor of the
// row prefix, since no data key lies between it and the coded stop)
// and NextPrefix skips to the next row. Because a row field is never
// a prefix of another, (prefix, rest) order equals bytewise order, as
// pebble requires. Value separation by suffix is disabled: every cell of a
// row shares the prefix, and scans want the values inline. The bottom
// level, which holds nearly every row once the store settles, has no
// filters (options.go).
//
// # Compression
//
// The default (CompressionSmall) writes the upper levels with the fastest
// codec and the bottom level with zstd at the pure-Go coder's best level
// in 32 KiB blocks: the dense columns are already entropy coded, and what
// zstd finds is the repeats between row keys, which only a block holding
// many rows shows it. Every level is written in row blocks, each key as
// its difference from the key before, at pebble's newest format (which
// keeps the log's sync chunks); pebble's columnar blocks store a settled
// store about 5 % larger. Compact rewrites bottom-level files that pebble
// moved down whole from an upper level (rewriteMoved), so a compacted
// store is all in the bottom level's setting.
//
// # Invariants and semantics
//
//   - Every acknowledged write was committed with pebble.Sync; pebble groups
//     concurrent synced batches into one WAL fsync.
//   - Put, Delete and each row of Apply are one pebble batch. Apply puts all
//     its rows in one batch, and ApplyGroup (storage.GroupApplier) the rows
//     of several tables of the store: one commit, one sync.
//   - Deletes are pebble range or point deletions of the keys that exist. A
//     pebble tombstone only hides older sequence numbers, so a later put, even
//     with an older cell timestamp, is visible again: no marker survives.
//   - Equal timestamps share a key, so the later write replaces the earlier.
//   - MaxVersions and TTL are applied on every read. A background collector
//     (Options.GCInterval) point-deletes expired and surplus versions, and
//     Compact runs it and compacts the keyspace, so space comes back.
//   - Rows are striped over 1024 read-write locks. Plain writes hold their
//     row's stripe shared (they never wait for each other); Increment,
//     CheckAndPut, Append and the collector's version trimming hold it
//     exclusively from their read to their commit, so they are atomic
//     with respect to every other single-row write.
//   - DropTable deletes the catalog entry and range-deletes the table's id
//     range in one batch, after waiting for calls in flight.
//   - Close waits for calls in flight. Open scanners hold a reference on
//     pebble and end with storage.ErrClosed at their next Next; pebble and
//     the directory LOCK are released when the last of them is closed, so a
//     leaked Scanner keeps the directory locked (and holds up a reopen,
//     which gives up after 30 s and tries again at the next check).
//   - A clean Close flushes the memtables and leaves one pebble log, holding
//     nothing to replay and nothing preallocated: the obsolete logs pebble
//     keeps for recycling are removed once the flush is in the manifest
//     (closelog.go), so a stopped store takes the disk it will take after
//     its next start.
//
// # Iterator reuse
//
// Creating a pebble iterator (a merging iterator over every memtable and
// level) costs more than reading a one-cell row, so Get and Scan take their
// iterator from a small per-DB pool (iterpool.go; 2×GOMAXPROCS, at least 4)
// and reposition it with SetBounds. Bounds are the only iterator options
// the store sets and the scanner resets its own filters per call, so a
// reuse inherits nothing of the previous read but its snapshot. Pooled
// iterators are closed (never dropped: they pin memtables and sstables and
// pebble refuses to close under them) by the first write that follows, by
// Compact once it has compacted, and by Close before pebble closes.
//
// A pebble iterator reads the snapshot taken when it was created, so reuse
// is guarded by two counters every write to pebble updates, data and
// catalog, user calls and collector alike: begun, before the commit, and
// done, after it returns and before the write is acknowledged. A new
// iterator loads done, then begun, then is created; it may be pooled only if
// the two were equal, and it records begun as its generation. It is reused
// (and returned to the pool) only while begun still equals its generation.
//
// Claim: no write is made visible in pebble between the creation of a
// pooled iterator and a read's check that reuses it, so the reused
// iterator returns exactly what a new one would at the check, a point
// inside the read's call; reads are therefore linearizable as before. In
// particular a write acknowledged before a read starts is visible to it.
// Proof: done ≤ begun at all times and both only grow. done = begun = g at
// the two loads means no write was between its begun and done increments at
// the second load, so every write that began by then is visible to the
// iterator created after it. A write not yet begun at that load adds to
// begun before its commit; if the commit precedes the check, begun exceeds
// g at the check and the iterator is closed instead. The comparison is on a
// 64-bit counter that never wraps in practice, so equality means no write
// began in between. Checking begun alone without the done = begun rule at
// creation would not do: a write in flight at creation, committing just
// after it, would be missed by a later read while a new iterator (say, a
// read that already returned) saw it.
//
// # Disk space
//
// A full disk must not crash the store nor lose what it acknowledged. The
// store keeps Options.MinFreeBytes (256 MiB) free for pebble's own
// flushes and compactions and for its callers' logs: a watcher reads the
// free space (FS.GetDiskUsage) every FreeCheckInterval (10 s), and while
// less is free every write is refused with storage.ErrReadOnly naming the
// figures ("read-only: disk: 12 MiB free in /data, under min_free_bytes
// 256 MiB"), except the collector's deletions, which give space back.
// Reads go on. Writes resume once an eighth more than the minimum is free.
// WriteErr returns the current refusal, SpaceStats the figures; the
// watcher warns at most once a minute (Options.RateLog) while refusing.
//
// If the disk fills anyway (another process), pebble meets ENOSPC: a
// failed log or manifest write goes to its Logger's Fatalf, which pebble
// never expects to return, and a failed flush or compaction to its
// EventListener, after which pebble retries the flush in a tight loop.
// The store's Fatalf returns for ENOSPC (and panics for anything else): the
// commit that hit it is failed by the store though pebble returns nil (the
// batch is in pebble's memtable but not in its log), every later write is
// refused, and the watcher reopens pebble read-only: the old opening is
// retired (calls fail at once with a retryable error, scanners end at
// their next Next), closed once its scanners are, and pebble opened again,
// replaying its log, which holds every synced batch and no part of the
// failed one. Acknowledged writes were all synced, so none is lost.
//
// A read-write open replays the log into an sstable and waits for that
// flush, forever on a full disk. So Open opens pebble read-only when less
// than MinFreeBytes is free (a new store cannot be created then), and the
// watcher reopens it read-write only once space is back and a probe
// confirms it: it reserves (fallocate) as many bytes as pebble's logs
// hold, plus 4 MiB, in a scratch file, since the free-space figure can
// mislead while another process fills the disk. A failed read-write
// reopen falls back to read-only. Between a check and the open's flush
// another process can still take the room; that open then waits until
// space returns.
//
// # Byte slices
//
// Get, GetAppend and a Scanner share one path: a row's visible cells are
// gathered in the scanner's pooled buffers (the row key, then each cell's
// qualifier and value, copied out of pebble's iterator, whose memory moves
// at every step). A Scanner's Row points into those buffers and is valid
// until the next Next or Close; the cell that ends a batch (of the next
// row, or past MaxBatchBytes) is not copied until the next Next, since the
// iterator has not moved from it. Get and GetAppend copy the gathered row
// into the caller's buf in one append (Get's is a fresh, exactly sized
// one) and describe it with cells appended to dst, so GetAppend into
// reused buffers allocates nothing. Append and Increment return memory the
// caller owns. Buffers grown past 1 MiB (or 16,384 cells) by a large row
// are not pooled.
package pebble
