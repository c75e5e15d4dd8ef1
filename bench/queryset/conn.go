package queryset

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection driven by the calling
// goroutine: the request is written and the answer read in place, with no
// transport goroutines between the caller and the socket (net/http's
// client hands every request to a writer goroutine and every answer back
// from a reader goroutine, two wake-ups that a busy 2-core machine turns
// into most of a small query's latency). It asks for no compression, as
// curl does. Not safe for concurrent use.
type conn struct {
	addr string // host:port
	c    net.Conn
	br   *bufio.Reader
	req  []byte
	body []byte
}

// errClosed is a reused connection the server closed before answering.
var errClosed = errors.New("connection closed by the server")

// dial opens the connection unless it is open.
func (c *conn) dial(ctx context.Context) error {
	if c.c != nil {
		return nil
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	c.c = nc
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 64<<10)
	} else {
		c.br.Reset(nc)
	}
	return nil
}

// close drops the connection.
func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// do sends one request (body nil for none, else of content type ctype)
// and returns the status and the answer's body, valid until the next
// call. A reused connection the server closed meanwhile is redialled
// once.
func (c *conn) do(ctx context.Context, method, target, ctype string, body []byte) (int, []byte, error) {
	reused := c.c != nil
	status, b, err := c.once(ctx, method, target, ctype, body)
	if err != nil && reused && errors.Is(err, errClosed) {
		status, b, err = c.once(ctx, method, target, ctype, body)
	}
	return status, b, err
}

func (c *conn) once(ctx context.Context, method, target, ctype string, body []byte) (int, []byte, error) {
	if err := c.dial(ctx); err != nil {
		return 0, nil, err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Minute)
	}
	c.c.SetDeadline(deadline)
	c.req = append(c.req[:0], method...)
	c.req = append(c.req, ' ')
	c.req = append(c.req, target...)
	c.req = append(c.req, " HTTP/1.1\r\nHost: "...)
	c.req = append(c.req, c.addr...)
	c.req = append(c.req, "\r\nUser-Agent: tsdquery\r\n"...)
	if body != nil {
		c.req = append(c.req, "Content-Type: "...)
		c.req = append(c.req, ctype...)
		c.req = append(c.req, "\r\nContent-Length: "...)
		c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
		c.req = append(c.req, "\r\n"...)
	}
	c.req = append(c.req, "\r\n"...)
	c.req = append(c.req, body...)
	if _, err := c.c.Write(c.req); err != nil {
		c.close()
		return 0, nil, fmt.Errorf("%w: %v", errClosed, err)
	}
	status, b, err := c.read()
	if err != nil {
		c.close()
	}
	return status, b, err
}

// read reads one answer: the status line, the headers and a body of
// Content-Length bytes or chunked.
func (c *conn) read() (int, []byte, error) {
	line, err := c.line()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errClosed
		}
		return 0, nil, err
	}
	_, rest, _ := bytes.Cut(line, []byte(" "))
	code, _, _ := bytes.Cut(rest, []byte(" "))
	status, err := strconv.Atoi(string(code))
	if err != nil {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	length, chunked, closeAfter := -1, false, false
	for {
		h, err := c.line()
		if err != nil {
			return 0, nil, err
		}
		if len(h) == 0 {
			break
		}
		k, v, _ := bytes.Cut(h, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(v)); err != nil || length < 0 {
				return 0, nil, fmt.Errorf("bad Content-Length %q", v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			closeAfter = bytes.EqualFold(v, []byte("close"))
		case bytes.EqualFold(k, []byte("Content-Encoding")):
			return 0, nil, fmt.Errorf("unasked Content-Encoding %q", v)
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		err = c.chunks()
	case length >= 0:
		c.body = append(c.body, make([]byte, length)...)
		_, err = io.ReadFull(c.br, c.body)
	default:
		c.body, err = readAllInto(c.body, c.br)
		closeAfter = true
	}
	if err != nil {
		return 0, nil, err
	}
	if closeAfter {
		c.close()
	}
	return status, c.body, nil
}

// chunks reads a chunked body into c.body.
func (c *conn) chunks() error {
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseUint(string(bytes.TrimSpace(size)), 16, 31)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailers up to the blank line
				if t, err := c.line(); err != nil || len(t) == 0 {
					return err
				}
			}
		}
		at := len(c.body)
		c.body = append(c.body, make([]byte, n)...)
		if _, err := io.ReadFull(c.br, c.body[at:]); err != nil {
			return err
		}
		if crlf, err := c.line(); err != nil || len(crlf) != 0 {
			return fmt.Errorf("chunk not followed by CRLF: %v", err)
		}
	}
}

// line reads one header line without its CRLF.
func (c *conn) line() ([]byte, error) {
	l, err := c.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(l, "\r\n"), nil
}

func readAllInto(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
