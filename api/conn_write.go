package api

import (
	"errors"
	"os"
	"time"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// Write writes p within the connection's write credit: how long its
// client may yet keep a reply waiting. The credit starts at
// Options.WriteTimeout; each moment a write waits for the client spends
// it, and each byte the client takes earns 1/Options.MinWriteRate of a
// second back, up to WriteTimeout again. A client that stops reading is
// thus closed after WriteTimeout, one that reads slower than MinWriteRate
// a little later, and one that keeps up never. The close frees what the
// connection's reader and writer hold (fasthttp's buffers, a streamed
// answer), and is counted and logged.
//
// The credit is the connection's, not a write's: restarting the wait on
// any progress, or at each write, let a client keep its connection, and
// the buffers and paused answer it holds, by taking a few bytes per wait,
// however slowly. Write is called by one goroutine at a time (the
// connection's fasthttp server or telnet handler). fasthttp sets no write
// deadline of its own (its WriteTimeout is zero), so this is the only one.
func (c *conn) Write(p []byte) (int, error) {
	d := c.srv.opts.WriteTimeout
	if d <= 0 {
		n, err := c.Conn.Write(p)
		if err != nil {
			c.writeFailed(err)
		}
		return n, err
	}
	perByte := time.Second / time.Duration(c.srv.opts.MinWriteRate)
	written := 0
	for {
		start := time.Now()
		if err := c.Conn.SetWriteDeadline(start.Add(c.credit)); err != nil {
			return written, err
		}
		n, err := c.Conn.Write(p[written:])
		written += n
		c.credit = min(d, c.credit-time.Since(start)+time.Duration(n)*perByte)
		switch {
		case err == nil:
			return written, nil
		case !errors.Is(err, os.ErrDeadlineExceeded):
			c.writeFailed(err)
			return written, err
		case c.credit > 0:
			continue // the bytes taken earned more time
		}
		c.srv.writeTimedOut(c)
		return written, err
	}
}

// writeTimedOut closes c, whose peer fell behind the write deadline, and
// counts and logs it.
func (s *Server) writeTimedOut(c *conn) {
	c.Conn.Close() // the owner's Close untracks the wrapper
	s.answers.writeTimeouts.Add(1)
	s.mu.Lock()
	kind := s.mu.conns[c]
	s.mu.Unlock()
	proto := "telnet"
	if kind == kindHTTP {
		proto = "http"
	}
	s.rlog.Warn("conn.write_timeout", ratelog.Client(c.RemoteAddr()),
		"closing connection: the client did not take its reply within the write timeout at the minimum rate",
		"protocol", proto, "timeout", s.opts.WriteTimeout, "min_rate_bytes_per_s", s.opts.MinWriteRate)
}
