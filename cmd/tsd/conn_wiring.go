package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/storage/pebble"
)

// networkConfig holds the connection keys.
type networkConfig struct {
	readHeaderTimeout time.Duration  // tsd.network.read_header_timeout, 0 none
	socketTimeout     int            // tsd.core.socket.timeout, seconds, 0 none
	connLimit         int            // tsd.core.connections.limit, 0 none but the descriptors'
	tls               api.TLSOptions // tsd.network.tls.*
	tlsReload         time.Duration  // tsd.network.tls.reload_interval, 0 only SIGHUP
}

// fdMargin is the descriptors kept from clients besides the pebble
// engine's cache of open sstables (pebble.Options.MaxOpenFiles): sstables
// being written by flushes and compactions and the tables iterators keep
// past that soft limit, the directories pebble and the write-ahead log
// sync, the log's segment and the one replayed, the small files written
// by rename (flush sequence, writer id), Bigtable's gRPC connections, and
// the process's own (stdio, the listener, epoll, pprof, DNS lookups).
const fdMargin = 256

// minConnLimit is the fewest client connections worth starting with; an
// open-file limit that leaves fewer is a start-up error.
const minConnLimit = 16

// minStoreFiles is the fewest sstables pebble is asked to keep open when
// the open-file limit is too low for its default.
const minStoreFiles = 64

// fdPlan is how the open-file limit is shared between the store's
// sstables and client connections, after fdMargin for everything else.
type fdPlan struct {
	storeFiles int  // pebble.Options.MaxOpenFiles; 0 for an engine without local files
	conns      int  // api.Options.MaxConns; -1 for no limit
	lowered    bool // conns is below the configured limit (0 counts as unbounded)
	storeLow   bool // storeFiles is below pebble's default, to leave room for clients
}

// planFDs shares an open-file limit of nofile (0: unknown) between the
// engine's sstables and at most limit client connections (0: none but the
// descriptors'). When the limit leaves at least minConnLimit connections
// beside pebble's default cache of open sstables, the store keeps its
// default; below that (a hard limit of 1,024, say) the store and the
// clients get half of what is left each, the store at least
// minStoreFiles, so tsd still starts, with fewer sstables open at once.
// Only a limit too small for both is an error.
func planFDs(limit int, nofile uint64, engine string) (fdPlan, error) {
	store := 0
	if engine == "pebble" {
		store = pebble.DefaultMaxOpenFiles
	}
	p := fdPlan{storeFiles: store, conns: -1}
	if limit > 0 {
		p.conns = limit
	}
	if nofile == 0 {
		return p, nil
	}
	avail := int(min(nofile, uint64(1<<31-1))) - fdMargin
	if avail-store < minConnLimit && store > 0 {
		p.storeFiles, p.storeLow = max(minStoreFiles, avail/2), true
	}
	fit := avail - p.storeFiles
	if fit < minConnLimit {
		return p, fmt.Errorf("tsd.core.connections.limit: the open-file limit (RLIMIT_NOFILE) is %d; "+
			"tsd keeps %d descriptors for itself and at least %d for its store, which leaves fewer than %d "+
			"for clients; raise it (ulimit -n, LimitNOFILE=) to at least %d",
			nofile, fdMargin, p.storeFiles, minConnLimit, fdMargin+p.storeFiles+minConnLimit)
	}
	if p.conns < 0 || p.conns > fit {
		p.conns, p.lowered = fit, true
	}
	return p, nil
}

// wireConns sets the connection deadlines and limit of opts and logs the
// limit with the figures it comes from.
func (c *config) wireConns(opts *api.Options, log *slog.Logger) {
	n := c.network
	opts.ReadHeaderTimeout, opts.IdleTimeout = -1, -1 // api's "none"
	if n.readHeaderTimeout > 0 {
		opts.ReadHeaderTimeout = n.readHeaderTimeout
	}
	if n.socketTimeout > 0 {
		opts.IdleTimeout = time.Duration(n.socketTimeout) * time.Second
	}
	opts.MaxConns = c.fds.conns
	opts.TLS = n.tls
	opts.TLS.ReloadInterval = noneIfZero(n.tlsReload)
	args := []any{"limit", c.fds.conns, "configured", n.connLimit, "open_file_limit", openFileLimit(),
		"reserved", fdMargin + c.fds.storeFiles}
	switch {
	case c.fds.storeLow:
		log.Warn("the open-file limit is below what pebble's default cache of open sstables and clients need: "+
			"the store keeps fewer sstables open and clients get the rest; raise the limit (ulimit -n) "+
			"to at least "+strconv.Itoa(fdMargin+pebble.DefaultMaxOpenFiles+minConnLimit)+" for pebble's default",
			append(args, "store_open_files", c.fds.storeFiles)...)
	case c.fds.lowered && n.connLimit != 0:
		log.Warn("tsd.core.connections.limit lowered to fit the open-file limit less the store's reserve", args...)
	default:
		log.Info("connection limit", args...)
	}
}

// connStats adds the listener's connection counters; srv is nil until
// the server exists.
func (l *statList) connStats(srv *api.Server) {
	if srv == nil {
		return
	}
	s := srv.ConnStats()
	// OpenTSDB's ConnectionManager stats.
	l.add("tsd.connectionmgr.connections", "Client connections, telnet and HTTP, by type: open now.", false, s.Open,
		api.StatTag{Key: "type", Value: "open"})
	l.add("tsd.connectionmgr.connections", "Client connections, telnet and HTTP, by type: rejected at once (tsd.network.max_connections), accepted in total.", true, s.Refused,
		api.StatTag{Key: "type", Value: "rejected"})
	l.add("tsd.connectionmgr.connections", "Client connections, telnet and HTTP, by type: rejected at once (tsd.network.max_connections), accepted in total.", true, s.Accepted,
		api.StatTag{Key: "type", Value: "total"})
	const excHelp = "Client connections closed by a failure, by type: a read deadline (timeout: a request head not sent in time, or idle), reset by the client, written to after the client closed them (closed), other read or write failures (unknown)."
	for _, e := range []struct {
		typ string
		n   int64
	}{{"timeout", s.ReadHeaderTimeouts + s.IdleTimeouts}, {"reset", s.Resets}, {"closed", s.Closed}, {"unknown", s.Failed}} {
		l.add("tsd.connectionmgr.exceptions", excHelp, true, e.n, api.StatTag{Key: "type", Value: e.typ})
	}
	l.add("tsd.connections.timeouts", "Client connections closed by a read deadline, by deadline.", true,
		s.ReadHeaderTimeouts, api.StatTag{Key: "deadline", Value: "read_header"})
	l.add("tsd.connections.timeouts", "Client connections closed by a read deadline, by deadline.", true,
		s.IdleTimeouts, api.StatTag{Key: "deadline", Value: "idle"})
	l.add("tsd.connections.tls.handshakes", "TLS sessions started on the port.", true, s.TLSHandshakes)
	l.add("tsd.connections.tls.handshake_failures", "Connections closed because their TLS handshake failed.", true, s.TLSHandshakeFailures)
	l.add("tsd.connections.tls.plaintext_refused", "Plaintext HTTP requests and telnet connections refused by tsd.network.tls.required.", true, s.PlaintextRefused)
}
