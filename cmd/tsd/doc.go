// Command tsd is the tsd daemon. `tsd` (or `tsd serve`) opens the store
// chosen by tsd.storage.engine (the embedded pebble engine in
// tsd.storage.directory, or Cloud Bigtable), makes sure the data, UID and
// meta tables and the settings record exist, and serves every API on
// tsd.network.port (4242) through package api until SIGINT or SIGTERM,
// when it shuts the server down and closes the store. SIGHUP reloads the
// TLS certificates (api.Server.Reload). With tsd.mode=ro it only checks
// the tables and the record, and opens no write path.
//
// # Configuration
//
// This is the only package that reads flags, files and the environment.
// Settings are OpenTSDB's property names where one exists and tsd.storage.*
// names for new ones. Each has a type (int, bool, string, duration or an
// enum) checked at start. They come from their defaults, then the
// --config file (Java properties, as opentsdb.conf), then --key=value or
// --key value flags. A key nobody knows or a bad value exits with status 2
// and a message naming the key and where it was set; a known OpenTSDB key
// that tsd does not use is a warning, so an existing opentsdb.conf starts.
// `tsd --help` lists every key with its type, default and description.
//
// The table of keys is keyTable in keys.go: one line per key binding its
// name, default and description to a field that wiring code (serve.go)
// passes into the options struct of the package using it. The Bigtable
// emulator address comes from BIGTABLE_EMULATOR_HOST, as the Bigtable
// client expects.
//
// # Descriptors
//
// At start tsd reads its open-file limit (RLIMIT_NOFILE, which the Go
// runtime has raised to the hard limit) and lowers
// tsd.core.connections.limit to it less the descriptors it keeps for the
// store and itself (planFDs in conn_wiring.go: pebble's MaxOpenFiles plus
// a margin of 256), so clients can never starve the store of files. When
// the limit is too low for pebble's default of 1,000 open sstables beside
// 16 clients (a hard limit of 1,024, say), the store and the clients share
// what is left half and half, the store at least 64, and tsd says so at
// WARN; it refuses to start only when even that leaves fewer than 16
// connections. It logs the limit with the figures it comes from.
//
// # Full disk
//
// serve hands the pebble engine tsd.storage.min_free_bytes and
// tsd.storage.free_check_interval, and builds one ingest.Gate over the
// engine's refusal of writes (disk_wiring.go) that every write path
// consults: the protocol writer, the flusher, compactor and retention
// loops, the API's other writes and a query's delete. A read-only daemon
// skips the final flush at SIGTERM (its points wait in the log) and exits
// cleanly. /metrics shows tsd_storage_read_only, tsd_storage_disk_*, and
// tsd_ingest_read_only_total per protocol. The tests fill a simulated
// disk: config.fs, which no key, flag or variable sets, carries it into
// serve, run in the test process.
//
// # Offline tools
//
// `tsd uid`, `tsd scan`, `tsd index rebuild` and `tsd repair` work on a
// stopped daemon's store with the daemon's settings. `tsd repair`
// (repair_cmd.go) runs pebble.Repair, writes back a settings record the
// rebuild lost (as read before it, else the configured one), and turns the
// lost key ranges into what an operator can act on: metrics and hours of the
// data table per salt bucket, names from the UID table, and the UID and
// series index rows lost with the command that rebuilds them.
// `tsd rollup rebuild` (rollup_cmd.go) runs flush.RebuildRollups on the
// stopped daemon's store (--data), or asks a running daemon to
// (--url: POST /api/rollup/rebuild, wired by wireRollupRebuild).
// `tsd compact` (compact_cmd.go) compacts a stopped daemon's store, or asks
// a running daemon to flush its head, drain its compaction queue and
// compact (--url: POST /api/compact, wired by wireCompact).
//
// # Damage
//
// A damaged store is served, not refused: the daemon starts with the
// configured settings when the settings record cannot be read, the series
// index loads around rows it cannot read, a damaged log of the store is
// salvaged without its damaged records, a damaged MANIFEST is mended from
// its copy, and tsd.storage.damaged-sstables, salvaged-logs,
// log-damaged-blocks and restored-manifests and tsd.wal.corrupt-records,
// corrupt-bytes and dropped-points count what was found.
//
// # Logging
//
// log/slog text lines on stderr. Once listening, tsd logs
// `listening on HOST:PORT` with the bound address, so a caller that asked
// for port 0 learns the port.
package main
