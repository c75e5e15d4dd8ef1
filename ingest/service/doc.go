// Package service turns parsed points into durable appends: it is the glue
// between the protocol parsers (ingest/telnet, ingest/putjson, ingest/influx,
// ingest/promrw) and the head. It owns the telnet connection handler, which
// package api hands every connection whose first byte is not an ASCII
// capital letter.
//
// # Write path
//
// A Writer is shared by the whole daemon. Each connection or request takes a
// Session (Writer.Session, returned with Release): its buffers (series key,
// tag list, head Appender) are reused, so a point in steady state costs no
// allocation. Session.Add resolves the point's names to UIDs
// (uid.UIDs.ResolvePoint; names were already checked by the protocol's
// parser, OpenTSDB's rules for telnet and /api/put, the lossless rules for
// Influx and remote_write) and appends it to the head, which registers new
// series in the series index. Session.Commit writes the pending points to
// the write-ahead log (synced when asked) and only then are they
// acknowledged.
//
// # Errors
//
// Add and Commit classify failures for the caller's next action: a point
// refused for its data is a *PointError (the client must not retry it; the
// other points of the request still land): an invalid or unknown name, a
// name over 4,096 bytes, a point out of range, a new series past a series
// limit (head.SeriesLimits, logged through the rate log). Anything the
// client should retry later (head over its memory limit, a log that cannot
// write, a store not answering, the daemon read-only) matches ErrThrottled
// (HTTP 503 with Retry-After, telnet "put: Please throttle writes: ..."),
// its text naming the cause. While Options.Gate says the daemon is
// read-only (a disk under tsd.storage.min_free_bytes, or full), Add
// refuses every point before it resolves a name, and Commit refuses points
// added before the gate closed: "Please throttle writes: read-only: disk:
// 12 MiB free in /data, under min_free_bytes 256 MiB". Nothing refused is
// acknowledged.
//
// # Telnet
//
// TelnetHandler serves OpenTSDB's line protocol (docs/opentsdb.md,
// Telnet) with lines up to TelnetOptions.MaxLineBytes (64 KiB; a longer
// line is answered "error: line too long: over N bytes" and skipped, the
// connection goes on). put is silent on success and answers OpenTSDB's one-line errors;
// version is a durability barrier: it commits the connection's pending
// puts and answers only once every put the connection sent before it is
// synced to stable storage (a failure is answered first, as a throttle
// line), so a client may take the reply as an acknowledgement. The wait is
// group-committed: none when the log's periodic sync already covered the
// puts, else one sync shared by every barrier waiting meanwhile. stats,
// help, dropcaches, exit and diediedie (refused by default) answer as
// OpenTSDB does. Puts are not committed one by one: a connection commits
// its pending points whenever the bytes it already received are used up,
// before it waits for more, so a burst of lines costs one log write and no
// fsync (the log syncs on its own interval); a client that streams
// without pause is committed every 4096 puts.
//
// rollup and histogram store their point at once, straight into the
// store (rollup.go, histogram.go), and are acknowledged by their silence:
// they never wait in the head or the log.
//
// # Histograms
//
// Session.AddHistogram writes one OpenTSDB 2.4 histogram cell (package
// rowkey/hist) into the series' hour row of the data table, in
// OpenTSDB's bytes whatever the store's format, after registering the
// series and its hour in the index. HistogramOptions.Codecs
// (tsd.core.histograms.config) names the codecs; without it every
// histogram is refused with ErrHistogramsDisabled. /api/histogram's
// points arrive through putjson's histogram mode (AddHistogramJSON),
// telnet's "histogram" lines through telnet_histogram.go.
//
// With TelnetOptions.Auth set (access control on; telnet_auth.go), a
// connection is who its verified client certificate names, or has the
// access granted to every telnet connection, or none until an "auth basic
// USER PASSWORD" or "auth token TOKEN" line succeeds (answered
// AUTH_SUCCESS or AUTH_FAIL, as OpenTSDB 2.4's telnet authentication).
// Without access only version, help and exit run; other commands are
// answered "auth: authentication required", and the third such failure or
// failed auth line closes the connection. put, rollup and histogram need
// write, stats read, dropcaches and diediedie admin; a command beyond the
// user's access is answered "auth: permission denied: ..." and audited.
package service
