package api

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/auth"
)

// accessLogLines is how many lines wait for the access log's writer; past
// it a request's line is dropped and counted
// (tsd_http_access_log_dropped_total), so a slow disk never holds a
// request up.
const accessLogLines = 4096

// accessLog writes one line per HTTP request (Options.AccessLog):
//
//	2026-11-28T15:04:05.123Z 10.0.0.7 alice "POST /api/put" 400 123 0.002314
//
// time (UTC), client address, user ("-" unless authenticated), method and
// path (quoted, without the query string, which may hold credentials),
// status, answer bytes ("-" for a streamed answer), seconds taken.
// Requests hand their lines to one goroutine through a bounded queue;
// Server.Close stops it after the last request.
type accessLog struct {
	w       *bufio.Writer
	lines   chan *[]byte
	bufs    sync.Pool // *[]byte
	dropped prometheus.Counter
	stop    chan struct{}
	done    chan struct{}
}

func newAccessLog(w io.Writer, dropped prometheus.Counter) *accessLog {
	a := &accessLog{w: bufio.NewWriterSize(w, 64<<10), lines: make(chan *[]byte, accessLogLines),
		dropped: dropped, stop: make(chan struct{}), done: make(chan struct{})}
	a.bufs.New = func() any { b := make([]byte, 0, 256); return &b }
	go a.run()
	return a
}

// log queues the request's line, or drops and counts it when the queue
// is full.
func (a *accessLog) log(ctx *fasthttp.RequestCtx, d time.Duration) {
	bp := a.bufs.Get().(*[]byte)
	*bp = appendAccessLine((*bp)[:0], ctx, d)
	select {
	case a.lines <- bp:
	default:
		a.dropped.Inc()
		a.bufs.Put(bp)
	}
}

// run writes queued lines, flushing whenever the queue is empty, until
// close; then it writes what is left.
func (a *accessLog) run() {
	defer close(a.done)
	for {
		select {
		case bp := <-a.lines:
			a.write(bp)
		case <-a.stop:
			for {
				select {
				case bp := <-a.lines:
					a.write(bp)
				default:
					a.w.Flush()
					return
				}
			}
		}
	}
}

func (a *accessLog) write(bp *[]byte) {
	a.w.Write(*bp) // an error is the writer's to report; a request is never failed for it
	a.bufs.Put(bp)
	if len(a.lines) == 0 {
		a.w.Flush()
	}
}

// close stops the writer once its queue is written. Lines logged after
// close are dropped (the queue is never closed, so a late request
// cannot panic).
func (a *accessLog) close() {
	close(a.stop)
	<-a.done
}

// appendAccessLine appends the request's line without allocating.
func appendAccessLine(b []byte, ctx *fasthttp.RequestCtx, d time.Duration) []byte {
	b = time.Now().UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, ' ')
	if ta, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		b = ta.AddrPort().Addr().Unmap().AppendTo(b)
	} else {
		b = append(b, '-')
	}
	b = append(b, ' ')
	if id, ok := ctx.UserValue(identityKey{}).(auth.Identity); ok && id.User != "" {
		b = appendLogField(b, id.User)
	} else {
		b = append(b, '-')
	}
	b = append(b, " \""...)
	b = append(b, ctx.Method()...)
	b = append(b, ' ')
	b = appendLogPath(b, ctx.Path())
	b = append(b, "\" "...)
	b = strconv.AppendInt(b, int64(ctx.Response.StatusCode()), 10)
	b = append(b, ' ')
	if ctx.Response.IsBodyStream() {
		b = append(b, '-')
	} else {
		b = strconv.AppendInt(b, int64(len(ctx.Response.Body())), 10)
	}
	b = append(b, ' ')
	b = strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64)
	return append(b, '\n')
}

// appendLogField appends s with spaces, quotes and control bytes
// replaced by _, so a field stays one word of one line.
func appendLogField(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '"' || c == 0x7f {
			c = '_'
		}
		b = append(b, c)
	}
	return b
}

// appendLogPath appends a path with quotes, backslashes and control
// bytes escaped as %XX, so it stays inside its quotes on one line.
func appendLogPath(b, p []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range p {
		if c < ' ' || c == '"' || c == '\\' || c == 0x7f {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return b
}
