// Package wal is tsd's write-ahead log: numbered segment files in one
// directory, written through a pebble vfs.FS (the same value the pebble
// engine uses, so one crash clone of the file system covers log and store).
//
// # Files
//
// A segment is named by its index, decimal, ten digits: 0000000001.wal,
// 0000000002.wal, ... Indexes start at 1 and grow by one; a segment is
// deleted only from the front (TruncateBefore), once the flusher has made
// every point in it durable in the store. LOCK keeps a second process out.
//
// # Records
//
// A segment is a sequence of records, never split across segments:
//
//	[length u32 LE][crc u32 LE][type u8][payload: length bytes]
//
// crc is CRC32C (Castagnoli) over the type byte and the payload. length is
// at most MaxRecordSize. Types:
//
//	1 header   first record of every segment, and only there:
//	           [version u8 = 1][segment index uvarint][prev+1 uvarint]
//	           prev is the valid length of the previous segment when it was
//	           closed (0 stored = unknown).
//	2 series   repeated [id uvarint][key length uvarint][key bytes]
//	           key = metric UID ‖ tagk UID ‖ tagv UID ... (tags sorted by tagk
//	           UID bytes, widths per series.Widths); id is the head's series
//	           reference, valid from here to the end of this segment.
//	3 samples  repeated [u uvarint][dt varint][value], where
//	           u = zigzag(id − previous id) << 2 | kind (0 int, 1 float32,
//	           2 float64), dt = T − previous T (milliseconds), the previous
//	           id and T being 0 at the start of the payload; value is a
//	           zigzag varint for int, 4 bytes LE IEEE-754 single for float32,
//	           8 bytes LE float64 bits for float64.
//	4 delete   [mint varint][maxt varint] repeated [key length uvarint]
//	           [key bytes]: the points of those series (keys as in series
//	           records) with mint <= T <= maxt (ms, zigzag) written by any
//	           record before it are deleted; later records are not
//	           affected. Added after the first release: logs without it
//	           replay unchanged, but a build that predates it reads a
//	           delete record as damage.
//
// Every segment is self-contained: a series is defined by a series record in
// a segment before the first sample of that segment references it, so a
// segment can be replayed, and its predecessors deleted, without any other
// segment or the UID table.
//
// # Writing
//
// Appenders hand whole framed records to Append. Records that arrive while
// a write is in flight join one batch that the next writer writes with one
// WriteAt (group commit). Append returns once its batch is written to the
// file, that is acknowledged in the operating system's page cache; the
// log's goroutine syncs every FsyncInterval, and a synchronous Append
// returns only after a sync covering its batch. A writer that appended
// without sync and later needs its records durable (a telnet version
// barrier) reads Written after its Append and calls SyncTo with it: it
// returns at once if a sync already covered that end, else it syncs, one
// sync serving every caller whose records were written before it started.
// Batches are written at an
// explicit offset, the end of the valid records, so after a failed or
// partial write (full disk) the next batch overwrites the garbage: nothing
// acknowledged is ever followed by garbage within the valid length.
//
// A new segment is created only after the previous one is synced, and its
// header, file and directory entry are synced before any record goes into
// it, so on disk a segment exists only if its predecessor is complete. A
// log opened on a full disk cannot create its first new segment: it opens
// anyway (replay needs no space), every append fails with ErrDiskFull, and
// the first append after space returns creates the segment.
//
// # Replay and damage
//
// Open replays every record in order. Reading a segment stops at the valid
// length the next segment's header recorded (bytes beyond it are a failed
// write), else at the end of the file. A record that is cut short, has a bad
// checksum, an unknown type or an impossible length, a misplaced header, or
// a segment shorter than its recorded length is damage: replay keeps
// everything before it, logs a warning naming the segment, the offset and the
// bytes and segments dropped, deletes the later segments, and starts a new
// segment whose header records the damaged segment's valid length, so the
// warning is not repeated. A log never refuses to open because of damage.
package wal
