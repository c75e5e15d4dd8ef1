package api

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/service"
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
	putDecs  sync.Pool
	lpDecs   sync.Pool
	rwDecs   sync.Pool
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
	return &ingestAPI{s: s, w: s.opts.Ingest, limit: s.opts.MaxRequestBodySize, budget: budget}
}

// route returns the endpoint of an ingest handler, planned (501) when the
// server has no writer.
func (a *ingestAPI) route(name string, prom bool, h func(*ingestAPI, *fasthttp.RequestCtx)) endpoint {
	if a == nil {
		return endpoint{name: name, prom: prom}
	}
	return endpoint{name: name, prom: prom, handle: func(ctx *fasthttp.RequestCtx) { h(a, ctx) }}
}

// bodyBuf is a request's decompressed body and its share of the budget.
type bodyBuf struct {
	b        []byte
	reserved int64
	alias    bool // b is the request's own body, not ours to pool
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
	if bb.alias {
		bb.b, bb.alias = nil, false
	}
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

// body returns the request body, gunzipped when Content-Encoding says gzip,
// holding its share of the budget until release. On failure it has
// answered the request (413 over the limit, 503 budget spent, 400 bad
// gzip) and returns nil.
func (a *ingestAPI) body(ctx *fasthttp.RequestCtx) *bodyBuf {
	bb := a.getBuf()
	raw := ctx.PostBody()
	var err error
	if enc := ctx.Request.Header.ContentEncoding(); bytes.EqualFold(enc, []byte("gzip")) {
		err = a.gunzip(bb, raw)
	} else if !a.reserve(bb, int64(len(raw))) {
		err = errBudgetSpent
	} else {
		bb.b, bb.alias = raw, true
	}
	if err != nil {
		a.release(bb)
		a.bodyError(ctx, err)
		return nil
	}
	return bb
}

// gunzip inflates raw into bb in steps, reserving budget before each, so
// a gzip bomb stops at the limit and costs at most that much memory.
func (a *ingestAPI) gunzip(bb *bodyBuf, raw []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	const step = 256 << 10
	bb.b = bb.b[:0]
	for {
		if len(bb.b) > a.limit {
			return errBodyTooLarge
		}
		if cap(bb.b)-len(bb.b) < step {
			if err := a.grow(bb, step); err != nil {
				return err
			}
		}
		n, err := zr.Read(bb.b[len(bb.b):cap(bb.b)])
		bb.b = bb.b[:len(bb.b)+n]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// grow doubles bb's capacity (at least by min), reserving the budget first.
func (a *ingestAPI) grow(bb *bodyBuf, min int) error {
	c := max(2*cap(bb.b), cap(bb.b)+min)
	if !a.reserve(bb, int64(c-cap(bb.b))) {
		return errBudgetSpent
	}
	nb := make([]byte, len(bb.b), c)
	copy(nb, bb.b)
	bb.b = nb
	return nil
}

// bodyError answers a body that could not be read.
func (a *ingestAPI) bodyError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, errBodyTooLarge):
		a.s.log.Warn("request body over the limit", "remote", ctx.RemoteAddr().String(),
			"path", string(ctx.Path()), "limit", a.limit)
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "Request body too large",
			"The decompressed request body is larger than the limit of "+strconv.Itoa(a.limit)+" bytes")
	case errors.Is(err, errBudgetSpent):
		writeError(ctx, fasthttp.StatusServiceUnavailable, "Please throttle writes", err.Error())
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	default:
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to decompress the request body", err.Error())
	}
}

// setThrottled marks a response as 503 with Retry-After.
func setThrottled(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
	ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
}
