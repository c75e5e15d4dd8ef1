package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// telnetSender writes put lines on one TCP connection.
type telnetSender struct {
	o    *Options
	conn net.Conn
	r    *bufio.Reader
	// Without a barrier, reader counts error lines in the background.
	wg       sync.WaitGroup
	mu       sync.Mutex
	errLines []string
	bufs     [2][]byte // a body and its barrier
}

func dialTelnet(ctx context.Context, o *Options) (*telnetSender, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("telnet dial %s: %w", o.Addr, err)
	}
	if o.TLS != nil {
		cfg := o.TLS
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(o.Addr)
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("telnet TLS handshake with %s: %w", o.Addr, err)
		}
		c = tc
	}
	s := &telnetSender{o: o, conn: c, r: bufio.NewReader(c)}
	if err := s.login(); err != nil {
		c.Close()
		return nil, err
	}
	if o.NoBarrier {
		s.wg.Add(1)
		go s.readErrors()
	}
	return s, nil
}

var versionCmd = []byte("version\n")

// login sends the auth line when the options carry credentials and
// waits for tsd's AUTH_SUCCESS.
func (s *telnetSender) login() error {
	var line string
	switch {
	case s.o.User != "":
		line = "auth basic " + s.o.User + " " + s.o.Password + "\n"
	case s.o.Token != "":
		line = "auth token " + s.o.Token + "\n"
	default:
		return nil
	}
	s.conn.SetDeadline(time.Now().Add(s.o.Timeout))
	if _, err := s.conn.Write([]byte(line)); err != nil {
		return fmt.Errorf("telnet auth: %w", err)
	}
	reply, err := s.r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("telnet auth: %w", err)
	}
	if strings.TrimSpace(reply) != "AUTH_SUCCESS" {
		return fmt.Errorf("telnet auth: %q", strings.TrimSpace(reply))
	}
	return nil
}

func (s *telnetSender) send(_ context.Context, b body) error {
	s.conn.SetDeadline(time.Now().Add(s.o.Timeout))
	if s.o.NoBarrier {
		if _, err := s.conn.Write(b.b); err != nil {
			return &connError{fmt.Errorf("telnet write: %w", err)}
		}
		return nil
	}
	// Two buffers in one writev: appending the barrier to the body would
	// copy the whole body into a new array whenever it has no spare room.
	s.bufs = [2][]byte{b.b, versionCmd}
	bufs := net.Buffers(s.bufs[:]) // WriteTo consumes it
	if _, err := bufs.WriteTo(s.conn); err != nil {
		return &connError{fmt.Errorf("telnet write: %w", err)}
	}
	return s.awaitBarrier()
}

// awaitBarrier reads the server's lines up to the end of the version reply;
// error lines before it fail the batch.
func (s *telnetSender) awaitBarrier() error {
	var bad []string
	for got := 0; got < s.o.BarrierLines; {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return &connError{fmt.Errorf("telnet read: %w", err)}
		}
		if isErrorLine(line) {
			bad = append(bad, strings.TrimSpace(line))
			continue
		}
		got++
	}
	if len(bad) > 0 {
		return fmt.Errorf("telnet: %d error lines, first: %s", len(bad), bad[0])
	}
	return nil
}

// isErrorLine reports OpenTSDB's telnet error replies ("put: ...").
func isErrorLine(line string) bool { return strings.HasPrefix(line, "put:") }

func (s *telnetSender) readErrors() {
	defer s.wg.Done()
	for {
		line, err := s.r.ReadString('\n')
		if isErrorLine(line) {
			s.mu.Lock()
			s.errLines = append(s.errLines, strings.TrimSpace(line))
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// close half-closes the connection so the server sees the end, waits for
// its remaining error lines up to the timeout, then closes.
func (s *telnetSender) close() []string {
	if tc, ok := s.conn.(*net.TCPConn); ok && s.o.NoBarrier {
		tc.CloseWrite()
		s.conn.SetReadDeadline(time.Now().Add(s.o.Timeout))
		s.wg.Wait()
	}
	s.conn.Close()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errLines
}
