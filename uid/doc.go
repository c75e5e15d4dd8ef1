// Package uid maps metric names, tag keys and tag values to the fixed-width
// unique IDs (UIDs) that row keys are built from, in OpenTSDB 2.4's UID
// table. It depends on the storage contract, and on package schema for the
// store's format and its UID table's default name; the store's settings
// record (format, salt, widths) is schema's, and uid is handed the widths
// and the format through Options.
//
// # The UID table (tsd.storage.hbase.uid_table, default "tsdb-uid")
//
// Two families, one version each, no TTL (TableSpec). Kinds are the
// qualifiers "metrics", "tagk" and "tagv"; W is the kind's width, 1..8 bytes
// (default 3, tsd.storage.uid.width.*).
//
//	row               family  qualifier       value
//	name bytes        id      <kind>          UID, W bytes big-endian      forward map
//	UID (W bytes)     name    <kind>          name bytes                   reverse map
//	UID (W bytes)     name    <type>_meta     UIDMeta JSON (OpenTSDB's)    metric_meta, tagk_meta, tagv_meta
//	0x00              id      <kind>          8-byte big-endian int64      MAXID counter
//
// Name bytes depend on the store's write format: schema.FormatOpenTSDB
// stores names as Latin-1 (ISO-8859-1), exactly as OpenTSDB does, and
// refuses names with a character above U+00FF (ErrNotLatin1);
// schema.FormatDense stores UTF-8. EncodeName and DecodeName convert; in
// memory and in the API every name is UTF-8.
//
// Invariants:
//   - UIDs start at 1; 0 is never assigned. MAXID holds the highest UID ever
//     handed out and never decreases: deleted and leaked UIDs are not reused.
//   - The reverse map of a UID is written before its forward map, so a
//     published name always has a name for its UID (a crash may leave a
//     reverse map without a forward map, which fsck removes).
//   - A name has at most one forward map per kind and a UID names at most
//     one thing per kind, whatever the number of concurrent writers.
//   - Forward-map rows are names, never the single byte 0x00 (names are
//     printable), so the MAXID row cannot collide with a name.
//   - The table holds only names RulesLossless accepts (non-empty, printable
//     UTF-8); the stricter RulesOpenTSDB are the telnet and /api/put
//     parsers' business (NewValidator).
//
// # Assignment
//
// OpenTSDB's protocol (UniqueIdAllocator): Increment MAXID; check-and-put
// the reverse map expecting it absent (a conflict means MAXID is behind the
// table: it is logged and the assignment starts again with a new ID);
// check-and-put the forward map expecting it absent (a conflict means
// another writer named it first: our ID leaks, its reverse map is deleted,
// and the winner's UID is read and returned); cache both ways. Retryable
// storage errors start again after a doubling pause, at most
// Options.MaxAttempts times. Concurrent requests for one name in one process
// share one assignment. ResolvePoint assigns a point's metric first, then
// each tag key and its value in ascending tag-key order.
//
// Batched assignment (ResolveBatch, ResolveNewBatch, AssignBatch) writes the
// same cells: one Increment of MAXID by n reserves n IDs; a scan of their
// reverse rows finds any already named (MAXID behind the table: that ID is
// skipped, as the reverse check-and-put would have refused it); the reverse
// maps go in one multi-row Apply, safe without check-and-put because the
// counter gave those IDs to this caller alone; only then are the forward
// maps checked-and-put, at most 64 in flight so an engine's grouped syncs
// or pipelined RPCs amortise them. A lost forward race takes the winner's
// UID and deletes our reverse map; the reserved ID stays unused. A crash
// anywhere leaves at worst unused IDs with reverse maps (fsck removes them),
// never a forward map without its reverse map. Names another caller in the
// process is assigning are waited for, not assigned twice.
//
// # Caches
//
// Each kind has a name→UID and a UID→name cache, sharded by hash with one
// read-write mutex per padded shard and no global lock. Eviction is CLOCK
// (second chance), an LRU approximation chosen so that a hit takes only its
// shard's read lock and sets a reference bit that is usually already set:
// hot names such as the tag key "host", looked up by every point on every
// core, never serialise on a mutex. A warm lookup does not allocate. Sizes
// are bounded by Options (default 1,048,576 entries each); hits, misses and
// evictions are counted (Stats).
// Other processes' renames and deletes are not seen until DropCaches, as in
// OpenTSDB.
//
// # The settings record
//
// A store without tsd's settings record whose UID table has a MAXID row
// holds OpenTSDB's data; MaxIDProbe is how package schema, which owns the
// record, finds out without knowing this table's layout.
package uid
