package api

import (
	"errors"
	"os"
	"time"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// Write writes p within the write deadline (Options.WriteTimeout): each
// write to the socket may wait that long for the peer to take bytes, a
// write that takes some starts the wait again, and one that takes none
// fails. The connection is then closed, which frees what its reader and
// writer hold (fasthttp's buffers, a streamed answer), and counted and
// logged. fasthttp sets no write deadline of its own (its WriteTimeout is
// zero), so this is the only one.
func (c *conn) Write(p []byte) (int, error) {
	d := c.srv.opts.WriteTimeout
	if d <= 0 {
		return c.Conn.Write(p)
	}
	written := 0
	for {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(d)); err != nil {
			return written, err
		}
		n, err := c.Conn.Write(p[written:])
		written += n
		switch {
		case err == nil:
			return written, nil
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return written, err
		case n > 0:
			continue // progress: a new wait
		}
		c.srv.writeTimedOut(c)
		return written, err
	}
}

// writeTimedOut closes c, whose peer took nothing for WriteTimeout, and
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
		"closing connection: the client took no byte of its reply within the write timeout",
		"protocol", proto, "timeout", s.opts.WriteTimeout)
}
