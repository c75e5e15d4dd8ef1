package api

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/valyala/fasthttp"
)

// readPhase says which read deadline governs a connection.
type readPhase uint8

const (
	// phaseHead: a request head is being read (the first byte, a TLS
	// handshake once there is one, HTTP's request line and headers, or
	// telnet's first line). The deadline is fixed when the head starts:
	// progress does not extend it, so a client trickling bytes is cut off.
	phaseHead readPhase = iota
	// phaseIdle: past the head (an HTTP body, telnet after its first
	// line). Each read may wait IdleTimeout for a byte.
	phaseIdle
	// phaseNext: between HTTP requests. Each read may wait IdleTimeout;
	// the first byte of the next request starts its head.
	phaseNext
)

// readState is a connection's read deadline bookkeeping, touched only by
// the goroutine reading it.
type readState struct {
	phase readPhase
	kind  connKind // kindTelnet: the head ends with the first '\n'
	// armed is the deadline set on the socket in phaseIdle and phaseNext,
	// zero when none is; reads re-arm it only once it is less than
	// IdleTimeout away, so most reads cost one clock read.
	armed    time.Time
	timedOut bool // the deadline fired and was counted
	failed   bool // a read failed otherwise and was counted
}

// startHead starts a request head at start: it must be read by
// start+ReadHeaderTimeout.
func (c *conn) startHead(start time.Time) {
	c.rd.phase = phaseHead
	var deadline time.Time
	if d := c.srv.opts.ReadHeaderTimeout; d > 0 {
		deadline = start.Add(d)
	}
	c.Conn.SetReadDeadline(deadline)
}

// endHead ends the head: from now on each read may wait IdleTimeout.
func (c *conn) endHead() { c.toIdle(phaseIdle) }

// awaitNext is called once an HTTP answer is written: the connection
// waits for its next request.
func (c *conn) awaitNext() { c.toIdle(phaseNext) }

func (c *conn) toIdle(p readPhase) {
	c.rd.phase, c.rd.armed = p, time.Time{}
	if c.srv.opts.IdleTimeout <= 0 {
		c.Conn.SetReadDeadline(time.Time{})
	}
}

// armRead moves the socket's deadline, outside a head, to at least
// IdleTimeout from now. It sets it a sixteenth further, so the reads of
// the next sixteenth of IdleTimeout need not set it again.
func (c *conn) armRead() {
	idle := c.srv.opts.IdleTimeout
	if c.rd.phase == phaseHead || idle <= 0 {
		return
	}
	if want := time.Now().Add(idle); want.After(c.rd.armed) {
		c.rd.armed = want.Add(idle / 16)
		c.Conn.SetReadDeadline(c.rd.armed)
	}
}

// progress follows the phases on the bytes b just read.
func (c *conn) progress(b []byte) {
	switch c.rd.phase {
	case phaseHead:
		if c.rd.kind == kindTelnet && bytes.IndexByte(b, '\n') >= 0 {
			c.endHead()
		}
	case phaseNext:
		c.startHead(time.Now())
	}
}

// readFailed counts and logs a read that hit the deadline, and counts a
// read the network failed (a reset), once per connection; the reader then
// closes the connection. An orderly close, the client's or ours, is no
// failure.
func (c *conn) readFailed(err error) {
	if c.rd.timedOut || c.rd.failed {
		return
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.rd.timedOut = true
		c.srv.deadlineHit(c)
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	default:
		c.rd.failed = true
		c.srv.connFailed(err)
	}
}

// SetReadDeadline does not set a deadline: the conn keeps its own. With
// its ReadTimeout and IdleTimeout zero, fasthttp sets a read deadline only
// right after the HeaderReceived hook (Server.headerReceived), once per
// request, so this call is how the conn learns that an HTTP request's head
// is in. A TLS connection layered on the conn passes the call through.
func (c *conn) SetReadDeadline(time.Time) error {
	c.endHead()
	return nil
}

// connOf returns the tracked conn under nc (nc itself, or what a layer
// such as *tls.Conn wraps), or nil.
func connOf(nc net.Conn) *conn {
	for {
		switch v := nc.(type) {
		case *conn:
			return v
		case interface{ NetConn() net.Conn }:
			nc = v.NetConn()
		default:
			return nil
		}
	}
}

// headSignal is the per-request read timeout headerReceived asks
// fasthttp for. Its value is unused: conn.SetReadDeadline takes fasthttp's
// call as the end of the head and keeps its own deadline. It only has to
// be positive for fasthttp to make the call.
const headSignal = time.Hour

// headerReceived is fasthttp's HeaderReceived hook: it asks for a read
// timeout so that fasthttp calls conn.SetReadDeadline, ending the head
// before fasthttp reads any of the body.
func (s *Server) headerReceived(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	return fasthttp.RequestConfig{ReadTimeout: headSignal}
}

// connState is fasthttp's ConnState hook: once an answer is written, the
// connection waits for its next request under IdleTimeout.
func (s *Server) connState(nc net.Conn, state fasthttp.ConnState) {
	if state != fasthttp.StateIdle {
		return
	}
	if c := connOf(nc); c != nil {
		c.awaitNext()
	}
}
