// Package ingest is tsd's write path. Its packages, by lifecycle:
//
//   - ingest/parse and the parsers ingest/telnet, putjson, influx and
//     promrw turn each wire format into points;
//   - ingest/service turns parsed points into durable appends: the shared
//     Writer, per-connection Sessions, the telnet connection handler;
//   - ingest/head holds every point from its commit until the store has
//     it: the open hour rows in memory, behind the write-ahead log
//     (ingest/wal), with the memory limit and the series limits;
//   - ingest/flush writes the head's complete hour rows to the store and
//     maintains them there: the Flusher, the compaction queue and the
//     Compactor, Retention, and the daemon's writer id.
//
// The series index's rebuild tool (`tsd index rebuild`) is not here: it
// reads the data table to write the index and nothing of the write path,
// so it is uid/index/rebuild.
//
// This package holds the one thing all of them share: the daemon's
// read-only state, the Gate.
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
package ingest
