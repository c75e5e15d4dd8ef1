package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/storage/pebble"
)

// networkConfig holds the connection keys.
type networkConfig struct {
	readHeaderTimeout time.Duration // tsd.network.read_header_timeout, 0 none
	socketTimeout     int           // tsd.core.socket.timeout, seconds, 0 none
	connLimit         int           // tsd.core.connections.limit, 0 none but the descriptors'
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

// storeFDs is how many descriptors the engine and the process keep from
// clients.
func storeFDs(engine string) int {
	if engine == "pebble" {
		return pebble.DefaultMaxOpenFiles + fdMargin
	}
	return fdMargin
}

// connLimit returns api.Options.MaxConns for the configured limit (0:
// none) under an open-file limit of nofile (0: unknown) of which reserve
// descriptors are not for clients, and whether the descriptors lowered
// it. -1 is no limit at all.
func connLimit(limit int, nofile uint64, reserve int) (int, bool, error) {
	if nofile == 0 {
		if limit == 0 {
			return -1, false, nil
		}
		return limit, false, nil
	}
	if nofile < uint64(reserve+minConnLimit) {
		return 0, false, fmt.Errorf("tsd.core.connections.limit: the open-file limit (RLIMIT_NOFILE) is %d "+
			"and tsd keeps %d descriptors for its store and itself, which leaves fewer than %d for clients; "+
			"raise it (ulimit -n, LimitNOFILE=) to at least %d", nofile, reserve, minConnLimit, reserve+minConnLimit)
	}
	fit := int(min(nofile-uint64(reserve), uint64(1<<31-1)))
	if limit == 0 || limit > fit {
		return fit, true, nil
	}
	return limit, false, nil
}

// wireConns sets the connection deadlines and limit of opts and logs the
// limit with the figures it comes from.
func (c *config) wireConns(opts *api.Options, log *slog.Logger) error {
	n := c.network
	opts.ReadHeaderTimeout, opts.IdleTimeout = -1, -1 // api's "none"
	if n.readHeaderTimeout > 0 {
		opts.ReadHeaderTimeout = n.readHeaderTimeout
	}
	if n.socketTimeout > 0 {
		opts.IdleTimeout = time.Duration(n.socketTimeout) * time.Second
	}
	nofile, reserve := openFileLimit(), storeFDs(c.engine)
	limit, lowered, err := connLimit(n.connLimit, nofile, reserve)
	if err != nil {
		return err
	}
	opts.MaxConns = limit
	args := []any{"limit", limit, "configured", n.connLimit, "open_file_limit", nofile, "reserved", reserve}
	if lowered && n.connLimit != 0 {
		log.Warn("tsd.core.connections.limit lowered to fit the open-file limit less the store's reserve", args...)
	} else {
		log.Info("connection limit", args...)
	}
	return nil
}

// connStats adds the listener's connection counters.
func (l *statList) connStats(conns func() api.ConnStats) {
	if conns == nil {
		return
	}
	s := conns()
	l.add("tsd.connections.open", "Client connections open, telnet and HTTP.", false, s.Open)
	l.add("tsd.connections.accepted", "Client connections accepted and served.", true, s.Accepted)
	l.add("tsd.connections.refused", "Client connections closed at once, by reason.", true, s.Refused,
		api.StatTag{Key: "reason", Value: "limit"})
	l.add("tsd.connections.timeouts", "Client connections closed by a read deadline, by deadline.", true,
		s.ReadHeaderTimeouts, api.StatTag{Key: "deadline", Value: "read_header"})
	l.add("tsd.connections.timeouts", "Client connections closed by a read deadline, by deadline.", true,
		s.IdleTimeouts, api.StatTag{Key: "deadline", Value: "idle"})
}
