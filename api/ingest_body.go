package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/influx"
	"github.com/tsd-db/tsd/ingest/promrw"
	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/ratelog"
)

// DefaultMaxInflightBytes is Options.MaxInflightBytes' default, 1 GiB.
const DefaultMaxInflightBytes = 1 << 30

// retryAfterSeconds is the Retry-After sent with every 503 on ingest.
const retryAfterSeconds = "1"

var (
	errBodyTooLarge = errors.New("decompressed body over the limit")
	errBudgetSpent  = errors.New("decompressed bytes in flight over the server's budget")
)

// ingestAPI holds the ingest endpoints' shared state: the writer, the
// budget of decompressed bytes in flight and pools of decoders and buffers.
type ingestAPI struct {
	s        *Server
	w        *service.Writer
	limit    int   // decompressed body limit per request
	budget   int64 // decompressed bytes in flight across requests
	inflight atomic.Int64
	bufs     sync.Pool // *bodyBuf
	putDecs  pool[*putjson.Decoder]
	lpDecs   pool[*influx.Decoder]
	rwDecs   pool[*promrw.Decoder]
	streams  sync.Pool // *bodyStream
}

// newIngestAPI returns nil when the server has no writer: the endpoints
// then stay planned (501).
func newIngestAPI(s *Server) *ingestAPI {
	if s.opts.Ingest == nil {
		return nil
	}
	budget := s.opts.MaxInflightBytes
	if budget <= 0 {
		budget = DefaultMaxInflightBytes
	}
	a := &ingestAPI{s: s, w: s.opts.Ingest, limit: s.opts.MaxRequestBodySize, budget: budget}
	a.initDecoders()
	return a
}

// route returns the endpoint of an ingest handler, planned (501) when the
// server has no writer.
func (a *ingestAPI) route(name string, prom bool, h func(*ingestAPI, *fasthttp.RequestCtx)) endpoint {
	if a == nil {
		return endpoint{name: name, prom: prom}
	}
	return endpoint{name: name, prom: prom, stream: true, handle: func(ctx *fasthttp.RequestCtx) { h(a, ctx) }}
}

// bodyBuf is a request's decompressed body and its share of the budget.
type bodyBuf struct {
	b        []byte
	reserved int64
}

// reserve takes n bytes of the budget, or reports false when spent.
func (a *ingestAPI) reserve(bb *bodyBuf, n int64) bool {
	if a.inflight.Add(n) > a.budget {
		a.inflight.Add(-n)
		return false
	}
	bb.reserved += n
	return true
}

// release returns bb's budget and bb to the pool.
func (a *ingestAPI) release(bb *bodyBuf) {
	a.inflight.Add(-bb.reserved)
	bb.reserved = 0
	if cap(bb.b) <= 4<<20 {
		bb.b = bb.b[:0]
		a.bufs.Put(bb)
	}
}

func (a *ingestAPI) getBuf() *bodyBuf {
	if bb, ok := a.bufs.Get().(*bodyBuf); ok {
		return bb
	}
	return &bodyBuf{}
}

// bodyStep is how much a body buffer grows at least, and what it holds of
// the budget before a read.
const bodyStep = 256 << 10

var errBodyRead = errors.New("reading the request body")

// netReader marks the errors of the network stream, so that a client that
// stops sending is told apart from a body that does not decompress.
type netReader struct{ r io.Reader }

func (n netReader) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", errBodyRead, err)
	}
	return k, err
}

// rawStream returns the request body as fasthttp streams it
// (Server.StreamRequestBody), or the buffered body when there is no stream.
func rawStream(ctx *fasthttp.RequestCtx) io.Reader {
	if ctx.Request.IsBodyStream() {
		return netReader{ctx.RequestBodyStream()}
	}
	return bytes.NewReader(ctx.Request.Body())
}

// isGzip reports a gzip Content-Encoding.
func isGzip(ctx *fasthttp.RequestCtx) bool {
	return bytes.EqualFold(ctx.Request.Header.ContentEncoding(), []byte("gzip"))
}

// bodyStream is a request's decompressed body being read: the network
// stream, gunzipped when Content-Encoding says gzip, failing with
// errBodyTooLarge past the limit. Pooled with its gzip reader.
type bodyStream struct {
	zr  *gzip.Reader
	lim limitReader
}

// stream returns the decompressed body stream of ctx; release it with
// putStream.
func (a *ingestAPI) stream(ctx *fasthttp.RequestCtx) (*bodyStream, error) {
	if ctx.Request.Header.ContentLength() > a.limit {
		// Refused unread; a gzip body that long inflates to more.
		return nil, errBodyTooLarge
	}
	bs, _ := a.streams.Get().(*bodyStream)
	if bs == nil {
		bs = &bodyStream{}
	}
	r := rawStream(ctx)
	if isGzip(ctx) {
		var err error
		if bs.zr == nil {
			bs.zr, err = gzip.NewReader(r)
		} else {
			err = bs.zr.Reset(r)
		}
		if err != nil {
			a.streams.Put(bs)
			return nil, err
		}
		r = bs.zr
	}
	bs.lim = limitReader{r: r, n: int64(a.limit)}
	return bs, nil
}

func (a *ingestAPI) putStream(bs *bodyStream) {
	bs.lim = limitReader{}
	a.streams.Put(bs)
}

// sizeHint is the first buffer size for a body: its length when it is
// sent uncompressed with a Content-Length, else one step.
func (a *ingestAPI) sizeHint(ctx *fasthttp.RequestCtx) int {
	if n := ctx.Request.Header.ContentLength(); n >= 0 && !isGzip(ctx) {
		return min(n, a.limit) + 1 // +1: the read that sees the end
	}
	return bodyStep
}

// readAll reads r to its end into bb in steps, reserving the budget before
// each, so a body costs at most the limit, and only while budget remains.
func (a *ingestAPI) readAll(bb *bodyBuf, r io.Reader, hint int) error {
	bb.b = bb.b[:0]
	if !a.reserve(bb, int64(cap(bb.b))) { // a pooled buffer's capacity
		return errBudgetSpent
	}
	for {
		if cap(bb.b) == len(bb.b) {
			if err := a.grow(bb, max(hint-cap(bb.b), bodyStep)); err != nil {
				return err
			}
		}
		n, err := r.Read(bb.b[len(bb.b):cap(bb.b)])
		bb.b = bb.b[:len(bb.b)+n]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// grow enlarges bb (doubling, at least by min), reserving the budget first.
func (a *ingestAPI) grow(bb *bodyBuf, min int) error {
	c := max(2*cap(bb.b), cap(bb.b)+min)
	if cap(bb.b) == 0 {
		c = min
	}
	if !a.reserve(bb, int64(c-cap(bb.b))) {
		return errBudgetSpent
	}
	nb := make([]byte, len(bb.b), c)
	copy(nb, bb.b)
	bb.b = nb
	return nil
}

// limitReader fails with errBodyTooLarge once more than n bytes were read.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if l.n -= int64(n); l.n < 0 {
		return n, errBodyTooLarge
	}
	return n, err
}

// bodyTooLarge logs a body over the limit and has write answer 413 in its
// protocol's form with the text given; then, when the body was refused
// unread, it closes the connection after the answer.
func (a *ingestAPI) bodyTooLarge(ctx *fasthttp.RequestCtx, write func(msg string)) {
	a.s.rlog.Warn("http.body_too_large", ratelog.Client(ctx.RemoteAddr()), "request body over the limit",
		"path", string(ctx.Path()), "limit", a.limit)
	write("The decompressed request body is larger than the limit of " + strconv.Itoa(a.limit) + " bytes")
	if ctx.Request.Header.ContentLength() > a.limit {
		ctx.SetConnectionClose() // refused unread: too much to drain
	}
}

// bodyError answers a body that could not be read.
func (a *ingestAPI) bodyError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, errBodyTooLarge):
		a.bodyTooLarge(ctx, func(msg string) {
			writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "Request body too large", msg)
		})
	case errors.Is(err, errBudgetSpent):
		writeError(ctx, fasthttp.StatusServiceUnavailable, "Please throttle writes", err.Error())
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	case errors.Is(err, errBodyRead) && isTimeout(err):
		// The client stopped sending for tsd.core.socket.timeout.
		writeError(ctx, fasthttp.StatusRequestTimeout, "Request timeout", err.Error())
		ctx.SetConnectionClose()
	case errors.Is(err, errBodyRead):
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to read the request body", err.Error())
	default:
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to decompress the request body", err.Error())
	}
}

// setThrottled marks a response as 503 with Retry-After.
func setThrottled(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
	ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
}
