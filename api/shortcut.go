package api

import (
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/auth"
	"github.com/tsd-db/tsd/api/promapi"
)

// rangePath is the PromQL range query's path, the one rangeShortcut
// serves.
const rangePath = "/api/v1/query_range"

// rangeShortcut answers a GET of /api/v1/query_range whose answer the
// PromQL answer cache keeps, found by the request's raw query string,
// before the request is routed and its parameters parsed
// (promapi.API.AnswerCached). A kept answer is what a dashboard's second
// viewer gets; on a VM its time is mostly waking up and running code gone
// cold since the last request, and routing, the role check and parsing
// were about a tenth of the CPU it cost (bench/README.md, Stop 47). The
// shortcut does for such a request what the route does: the route's
// metrics and logs (serveHTTP), Options.Reading, and the CORS headers and
// compression of promapi's answers. A request it does not answer goes
// the whole way.
type rangeShortcut struct {
	a     *promapi.API
	route *routeMetrics
	s     *Server
}

// newRangeShortcut returns the shortcut, or nil when something stands
// before the route that the shortcut would skip: access control, CORS
// domains (browser.go), TLS required for every request; or when it has
// nothing to give: no answer cache, or a mode or build without the route.
func (s *Server) newRangeShortcut() *rangeShortcut {
	e, ok := s.routes.paths[rangePath]
	if !ok || s.routes.prom.a == nil || s.opts.PromQL.Cache == nil || s.opts.Auth != nil || s.cors.domains != nil || s.opts.TLS.Required {
		return nil
	}
	return &rangeShortcut{a: s.routes.prom.a, route: s.routeOf([]byte(rangePath), e), s: s}
}

// serve answers ctx and reports true when it is a range query the answer
// cache holds; false leaves ctx untouched.
func (r *rangeShortcut) serve(ctx *fasthttp.RequestCtx) bool {
	if r == nil || string(ctx.Path()) != rangePath {
		return false
	}
	if !r.a.AnswerCached(ctx) {
		return false
	}
	r.s.noteReading(auth.Read)
	ctx.SetUserValue(routeKey{}, r.route)
	compressAnswer(ctx)
	return true
}
