package api

import (
	"errors"
	"net"
	"sync/atomic"
	"syscall"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// ConnStats are the server's connection counters.
type ConnStats struct {
	Open     int64 // connections open now (gauge)
	Accepted int64 // connections accepted and served
	// Refused counts connections closed at once because Options.MaxConns
	// were open.
	Refused int64
	// ReadHeaderTimeouts counts connections closed for not sending a
	// request head within Options.ReadHeaderTimeout.
	ReadHeaderTimeouts int64
	// IdleTimeouts counts connections closed after a read waited
	// Options.IdleTimeout without a byte.
	IdleTimeouts int64
	// TLSHandshakes counts TLS sessions started; TLSHandshakeFailures
	// counts connections closed because their handshake failed (a client
	// certificate refused, a protocol below TLS 1.2, a stalled handshake).
	TLSHandshakes, TLSHandshakeFailures int64
	// PlaintextRefused counts plaintext requests and telnet connections
	// refused because TLSOptions.Required is set.
	PlaintextRefused int64
	// Resets counts connections whose read or write the client reset,
	// Closed those written to after the client closed them (a broken
	// pipe), Failed those whose read or write failed otherwise: OpenTSDB's
	// connectionmgr.exceptions types reset, closed and unknown. A
	// connection counts once per direction.
	Resets, Closed, Failed int64
}

// connCounts are the counters behind ConnStats.
type connCounts struct {
	accepted, refused, headTimeouts, idleTimeouts atomic.Int64
	tlsConns, tlsFailed, plainRefused             atomic.Int64
	resets, closed, failed                        atomic.Int64
}

// ConnStats returns the connection counters; it is safe for concurrent
// use.
func (s *Server) ConnStats() ConnStats {
	s.mu.Lock()
	open := len(s.mu.conns)
	s.mu.Unlock()
	return ConnStats{
		Open:                 int64(open),
		Accepted:             s.counts.accepted.Load(),
		Refused:              s.counts.refused.Load(),
		ReadHeaderTimeouts:   s.counts.headTimeouts.Load(),
		IdleTimeouts:         s.counts.idleTimeouts.Load(),
		TLSHandshakes:        s.counts.tlsConns.Load(),
		TLSHandshakeFailures: s.counts.tlsFailed.Load(),
		PlaintextRefused:     s.counts.plainRefused.Load(),
		Resets:               s.counts.resets.Load(),
		Closed:               s.counts.closed.Load(),
		Failed:               s.counts.failed.Load(),
	}
}

// refuse closes nc, accepted past Options.MaxConns, at once: the
// descriptor it holds belongs to the store's reserve. It counts and logs
// first, so a client that sees the close finds it counted.
func (s *Server) refuse(nc net.Conn) {
	s.counts.refused.Add(1)
	s.rlog.Warn("conn.limit", ratelog.Client(nc.RemoteAddr()),
		"connection refused: the limit of open connections is reached", "limit", s.opts.MaxConns)
	nc.Close()
}

// deadlineHit counts and logs c's read deadline; the head deadline is a
// warning (a client that connects and does not send a request), the idle
// one is routine.
func (s *Server) deadlineHit(c *conn) {
	client := ratelog.Client(c.RemoteAddr())
	if c.rd.phase == phaseHead {
		s.counts.headTimeouts.Add(1)
		s.rlog.Warn("conn.read_header_timeout", client,
			"closing connection: no complete request head within the read-header timeout",
			"protocol", c.rd.kind.String(), "timeout", s.opts.ReadHeaderTimeout)
		return
	}
	s.counts.idleTimeouts.Add(1)
	s.rlog.Info("conn.idle_timeout", client, "closing idle connection",
		"protocol", c.rd.kind.String(), "timeout", s.opts.IdleTimeout)
}

// String names k in log lines.
func (k connKind) String() string {
	switch k {
	case kindHTTP:
		return "http"
	case kindTelnet:
		return "telnet"
	}
	return "unknown"
}

// connFailed counts a read or write the network failed, by kind.
func (s *Server) connFailed(err error) {
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		s.counts.resets.Add(1)
	case errors.Is(err, syscall.EPIPE):
		s.counts.closed.Add(1)
	default:
		s.counts.failed.Add(1)
	}
}

// writeFailed counts c's first failed write that is not our own close.
func (c *conn) writeFailed(err error) {
	if c.wfailed || errors.Is(err, net.ErrClosed) {
		return
	}
	c.wfailed = true
	c.srv.connFailed(err)
}
