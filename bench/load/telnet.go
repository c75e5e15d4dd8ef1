package load

import (
	"bufio"
	"context"
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
	s := &telnetSender{o: o, conn: c, r: bufio.NewReader(c)}
	if o.NoBarrier {
		s.wg.Add(1)
		go s.readErrors()
	}
	return s, nil
}

var versionCmd = []byte("version\n")

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
