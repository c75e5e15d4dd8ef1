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
//	5 samples-ms as samples, with u = zigzag(id − previous id) << 3 |
//	           ms << 2 | kind, ms 1 for a point whose client gave
//	           milliseconds (series.Point.Ms: OpenTSDB's format writes it
//	           with a millisecond qualifier even on a whole second). The
//	           head writes a batch as samples-ms only when one of its
//	           points has the mark, so logs of other clients are as
//	           before; a build that predates it reads one as damage.
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
// Open replays every segment in order, each to its end. Reading a segment
// stops at the valid length the next segment's header recorded (bytes
// beyond it are a failed write), else at the end of the file. A record is
// intact when its length fits, its checksum holds and its type is known; a
// header is intact only first in its segment, with its own index.
//
// Anything else is a damaged place, and replay skips it and goes on: it
// steps forward from the damaged record a byte at a time to the first
// offset where an intact record starts that either ends the segment or is
// followed by a plausible frame (a known type and a length that fits; the
// damaged record's own claimed end needs only the checksum). A byte flipped
// anywhere in a record thus costs exactly that record, whether it hit the
// payload, the checksum, the type or the length. Several damaged records
// close together are skipped as one place, and an intact record between two
// damaged ones may go with them. When nothing intact follows, the place is
// the rest of the segment. Records are found by their checksum alone, so a
// frame forged inside a payload (a client chooses the 8 bytes of each
// float64 value) could be taken for a record, but only where it lies inside
// a damaged record whose length is damaged too.
//
// Later segments are never touched: Open removes no segment and truncates
// none, and the new segment it starts is numbered after the last existing
// one. Its header records the end of the last intact record of the previous
// segment, so a damaged tail there is not read again; damage before intact
// records is reported at every open until the flusher deletes the segment.
//
// A damaged place that ends the newest segment, where the file ends inside
// a record or in zeros, is an interrupted write (a crash, or power lost
// before the periodic sync): it is logged as a warning and counted apart
// (ReplayStats.TornBytes). Every other damaged place is corruption, logged
// as one error line naming the segment, the offset, the bytes skipped and
// why, and counted (ReplayStats.CorruptRecords and CorruptBytes). A damaged
// length in the newest segment's last record that reaches past the end of
// the file reads as an interrupted write. A log never refuses to open
// because of damage.
package wal
