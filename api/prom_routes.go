package api

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/api/promapi"
)

// promRoutes builds the Prometheus HTTP API's endpoints; with no
// Queryable in Options.PromQL they stay planned (501).
type promRoutes struct{ a *promapi.API }

// newPromRoutes returns the routes over Options.PromQL. The API needs no
// Close: its engine, built without a query tracker, starts no goroutine.
func newPromRoutes(s *Server) promRoutes {
	if s.opts.PromQL.Queryable == nil {
		return promRoutes{}
	}
	o := s.opts.PromQL
	if o.Logger == nil {
		o.Logger = s.log
	}
	if o.Context == nil {
		o.Context = s.work
	}
	if o.Limiter == nil {
		o.Limiter = s.queries // one set of query slots for both languages
	}
	if o.Revision == "" {
		o.Revision = s.opts.Version.FullRevision
	}
	return promRoutes{a: promapi.New(o)}
}

// route returns the endpoint of name served by h, also under /prometheus.
func (p promRoutes) route(name string, h func(*promapi.API, *fasthttp.RequestCtx)) endpoint {
	return endpoint{name: name, prom: true, handle: p.handler(h)}
}

// queryRoute is /api/v1/query, which two APIs share (doc.go, Routing): a
// request with a query parameter is Prometheus's instant query, and so is
// OPTIONS (a browser's CORS preflight, which has no parameters); any
// other (OpenTSDB's m, tsuid or JSON body) is OpenTSDB's /api/query.
func (p promRoutes) queryRoute(s *Server) endpoint {
	prom := p.route("/api/v1/query", (*promapi.API).Query)
	prom.handle = func(ctx *fasthttp.RequestCtx) {
		if promapi.HasQuery(ctx) || (ctx.IsOptions() && p.a != nil) {
			serveEndpoint(ctx, endpoint{name: prom.name, handle: p.handler((*promapi.API).Query)})
			return
		}
		s.handleQuery(ctx)
	}
	return prom
}

// handler is h bound to the API, nil without one, its answers compressed
// by compressAnswer.
func (p promRoutes) handler(h func(*promapi.API, *fasthttp.RequestCtx)) fasthttp.RequestHandler {
	if p.a == nil {
		return nil
	}
	inner := p.a.Handler(h)
	return func(ctx *fasthttp.RequestCtx) {
		inner(ctx)
		compressAnswer(ctx)
	}
}

// compressAnswer compresses the answer written to ctx when the client
// accepts it (Grafana's Go client always does), at the fastest level: a
// range answer's repeated timestamps and labels shrink several times
// over, as Prometheus's own answers do. A body under answer.MinGzip goes
// as it is, as /api/query's do. A whole body is gzipped here on the
// request's goroutine (answer.AppendGzip says why); streams, and clients
// that take only deflate or zstd, are left to fasthttp.
func compressAnswer(ctx *fasthttp.RequestCtx) {
	resp := &ctx.Response
	if !ctx.Request.Header.HasAcceptEncoding("gzip") || resp.IsBodyStream() {
		compressOther(ctx)
		return
	}
	body := resp.Body()
	if len(body) < answer.MinGzip || len(resp.Header.ContentEncoding()) > 0 || !compressible(resp.Header.ContentType()) {
		return
	}
	answer.SetGzipped(resp, body)
}

// compressible reports a Content-Type worth compressing: text and
// application types, as fasthttp judges them.
func compressible(ct []byte) bool {
	return bytes.HasPrefix(ct, []byte("text/")) || bytes.HasPrefix(ct, []byte("application/"))
}

// compressOther is fasthttp's compression, for what compressAnswer leaves.
var compressOther = fasthttp.CompressHandlerLevel(func(*fasthttp.RequestCtx) {}, fasthttp.CompressBestSpeed)
