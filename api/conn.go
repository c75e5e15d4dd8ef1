package api

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// connKind is what the server knows of a connection so far.
type connKind uint8

const (
	kindSniff  connKind = iota // first byte not read yet
	kindHTTP                   // handed to fasthttp
	kindTelnet                 // handed to Options.Telnet
)

// conn is an accepted connection, tracked by the server until closed. Its
// first Read replays the byte the server read to tell HTTP from telnet,
// and every Read runs under the read deadline of conn_read.go.
type conn struct {
	net.Conn
	srv *Server
	// first, replay and rd are touched only by the goroutine reading the
	// connection; the hand-off to fasthttp orders the two readers.
	first  byte
	replay bool
	rd     readState
	// credit is how long the client may yet keep a reply waiting
	// (conn_write.go); touched only by the goroutine writing.
	credit time.Duration
	// wfailed says a failed write was counted; touched only by the
	// goroutine writing.
	wfailed bool

	closeOnce sync.Once
	closeErr  error
}

// Read returns the replayed first byte, then reads the connection within
// its read deadline.
func (c *conn) Read(p []byte) (int, error) {
	if c.replay && len(p) > 0 {
		p[0], c.replay = c.first, false
		c.progress(p[:1])
		return 1, nil
	}
	c.armRead()
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.progress(p[:n])
	}
	if err != nil {
		c.readFailed(err)
	}
	return n, err
}

// Close closes the connection once and stops tracking it.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.srv.untrack(c)
		c.closeErr = c.Conn.Close()
	})
	return c.closeErr
}

// track wraps and registers nc, accepted at start, counting its goroutine
// in wg and starting its first request head. After Close, or past
// Options.MaxConns, it closes nc and returns nil.
func (s *Server) track(nc net.Conn, start time.Time) *conn {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		nc.Close()
		return nil
	}
	if s.opts.MaxConns > 0 && len(s.mu.conns) >= s.opts.MaxConns {
		s.mu.Unlock()
		s.refuse(nc)
		return nil
	}
	c := &conn{Conn: nc, srv: s, credit: s.opts.WriteTimeout}
	s.mu.conns[c] = kindSniff
	s.wg.Add(1)
	s.mu.Unlock()
	s.counts.accepted.Add(1)
	c.startHead(start)
	return c
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	s.mu.Unlock()
}

// setKind records what c turned out to be; it reports false once Close has
// begun, when c must not be handed on.
func (s *Server) setKind(c *conn, k connKind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return false
	}
	if _, ok := s.mu.conns[c]; !ok {
		return false // closed under us
	}
	s.mu.conns[c] = k
	return true
}

// serveConn reads the first byte of c and hands c to HTTP (an ASCII capital
// letter starts every HTTP method) or to telnet (anything else). A first
// byte 0x16 starts a TLS session (tls.go), inside which the first byte of
// plaintext picks HTTP or telnet the same way.
func (s *Server) serveConn(c *conn) {
	defer s.wg.Done()
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		c.Close()
		return
	}
	c.first, c.replay = b[0], true
	var nc net.Conn = c
	var tc *tlsConn
	if b[0] == tlsHandshakeByte {
		var ok bool
		if tc, ok = s.serveTLS(c); !ok {
			return
		}
		nc, b[0] = tc, tc.first
	}
	if b[0] >= 'A' && b[0] <= 'Z' {
		c.rd.kind = kindHTTP
		if !s.setKind(c, kindHTTP) || !s.httpConns.deliver(nc) {
			nc.Close()
		}
		return
	}
	if tc != nil {
		tc.telnetHead = true // its head ends with the first '\n' of plaintext
	} else {
		c.rd.kind = kindTelnet // its head ends with the replayed byte if that is '\n'
	}
	if !s.setKind(c, kindTelnet) {
		nc.Close()
		return
	}
	s.serveTelnet(c, nc)
}

// serveTLS starts the TLS session of c, or closes c (logging why) and
// reports false.
func (s *Server) serveTLS(c *conn) (*tlsConn, bool) {
	client := ratelog.Client(c.RemoteAddr())
	if s.certs == nil {
		s.rlog.Warn("conn.tls_off", client,
			"closing connection: it starts a TLS handshake but TLS is not configured (tsd.network.tls.cert_file)")
		c.Close()
		return nil, false
	}
	tc, err := s.startTLS(c)
	if err != nil {
		// A deadline was logged as such.
		if !c.rd.timedOut && !errors.Is(err, errClosedAfterHandshake) {
			s.rlog.Warn("conn.tls_handshake", client, "closing connection: TLS handshake failed", "err", err)
		}
		c.Close()
		return nil, false
	}
	return tc, true
}

// serveTelnet runs Options.Telnet on nc (c, or the TLS session on it), or
// closes c with a log line when the server was built without a telnet
// handler. With TLSOptions.Required, a plaintext telnet connection gets
// one error line and is closed.
func (s *Server) serveTelnet(c *conn, nc net.Conn) {
	defer nc.Close()
	if s.opts.Telnet == nil {
		s.rlog.Warn("conn.no_telnet", ratelog.Client(c.RemoteAddr()),
			"closing non-HTTP connection: this server has no telnet handler",
			"first_byte", strconv.QuoteRune(rune(c.first)))
		return
	}
	if s.opts.TLS.Required && nc == net.Conn(c) {
		s.refusePlaintextTelnet(c)
		return
	}
	s.opts.Telnet.ServeConn(nc)
}

// tlsRequiredLine is what a plaintext telnet client gets when TLS is
// required.
const tlsRequiredLine = "error: TLS is required on this port (tsd.network.tls.required=true); connect with TLS\n"

func (s *Server) refusePlaintextTelnet(c *conn) {
	s.counts.plainRefused.Add(1)
	s.rlog.Warn("conn.tls_required", ratelog.Client(c.RemoteAddr()),
		"closing plaintext telnet connection: TLS is required (tsd.network.tls.required)")
	io.WriteString(c, tlsRequiredLine)
}

// connQueue is the net.Listener fasthttp accepts from: it yields the
// connections serveConn identified as HTTP.
type connQueue struct {
	ch        chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newConnQueue() *connQueue {
	return &connQueue{ch: make(chan net.Conn), done: make(chan struct{})}
}

// deliver waits until fasthttp takes c; it reports false once the queue
// is closed.
func (q *connQueue) deliver(c net.Conn) bool {
	select {
	case q.ch <- c:
		return true
	case <-q.done:
		return false
	}
}

// Accept implements net.Listener. Its error after Close is net.ErrClosed,
// which fasthttp treats as a clean stop.
func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; it is idempotent.
func (q *connQueue) Close() error {
	q.closeOnce.Do(func() { close(q.done) })
	return nil
}

// Addr implements net.Listener; the queue has no address of its own.
func (q *connQueue) Addr() net.Addr { return queueAddr{} }

type queueAddr struct{}

func (queueAddr) Network() string { return "tsd-sniffed" }
func (queueAddr) String() string  { return "sniffed-http" }
