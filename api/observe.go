package api

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// This file is what the server records of each HTTP request once its
// handler returns: its duration by route and status (Metrics), a log line
// for an error answer, the slow-query log and the access log.

// routeKey holds a request's *routeMetrics in its user values; serve sets
// it once the request is routed.
type routeKey struct{}

// unmatchedRoute is the route label of requests no route served (404s,
// CORS preflights, plaintext refused under TLS).
const unmatchedRoute = "unmatched"

// initRouteMetrics makes the observers of every route name the server
// may report: the route table's endpoints and the sub-routes routeRoles
// names (/api/query/last), so a request never builds a label.
func (s *Server) initRouteMetrics() {
	m := s.opts.Metrics
	s.routeStats = make(map[string]*routeMetrics)
	add := func(name string) {
		if _, ok := s.routeStats[name]; !ok {
			s.routeStats[name] = m.newRoute(name)
		}
	}
	for _, e := range s.routes.paths {
		add(e.name)
	}
	for _, e := range s.routes.openTSDB {
		add(e.name)
	}
	for name := range routeRoles {
		add(name)
	}
	for name := range queryRoutes {
		add(name)
	}
	s.unmatched = m.newRoute(unmatchedRoute)
}

// routeOf returns the observers of the route e serves for path: e's
// name, or name/sub when routeRoles names the sub-route.
func (s *Server) routeOf(path []byte, e endpoint) *routeMetrics {
	r := s.routeStats[e.name]
	if len(e.name) > len("/api/") && e.name[:len("/api/")] == "/api/" {
		var buf [128]byte // a name under 64 bytes, '/', a sub of at most 32
		b := append(append(buf[:0], e.name...), '/')
		if n := len(b); len(e.name) < 64 {
			if b = appendAPISub(b, path); len(b) > n {
				if sub, ok := s.routeStats[string(b)]; ok {
					r = sub
				}
			}
		}
	}
	if r == nil {
		return s.unmatched
	}
	return r
}

// appendAPISub appends apiSub(path) without allocating.
func appendAPISub(dst, path []byte) []byte {
	_, rest := nextSegment(path) // "api"
	seg, rest := nextSegment(rest)
	if len(seg) > 1 && (seg[0] == 'v' || seg[0] == 'V') && isDigit(seg[1]) {
		_, rest = nextSegment(rest)
	}
	sub, _ := nextSegment(rest)
	if len(sub) > 32 {
		return dst
	}
	return appendLower(dst, sub)
}

// finishRequest records the request serveHTTP has just answered.
func (s *Server) finishRequest(ctx *fasthttp.RequestCtx, start time.Time) {
	d := time.Since(start)
	s.latency.observe(d)
	r, _ := ctx.UserValue(routeKey{}).(*routeMetrics)
	if r == nil {
		r = s.unmatched
	}
	code := ctx.Response.StatusCode()
	r.observe(code, d)
	// 401 and 403 are the audit log's (api/auth), not repeated here.
	if code >= 400 && code != fasthttp.StatusUnauthorized && code != fasthttp.StatusForbidden {
		s.logErrorAnswer(ctx, r, code)
	}
	if r.api != "" && s.opts.SlowQueryThreshold > 0 && d >= s.opts.SlowQueryThreshold {
		s.logSlowQuery(ctx, r, d)
	}
	if s.access != nil {
		s.access.log(ctx, d)
	}
}

// maxReasonBytes bounds the part of an error answer's body a log line
// quotes as its reason.
const maxReasonBytes = 512

// logErrorAnswer logs a 4xx or 5xx answer at INFO with its route, status
// and reason (the start of its body), within the rate-limited log's
// budget for the client.
func (s *Server) logErrorAnswer(ctx *fasthttp.RequestCtx, r *routeMetrics, code int) {
	kind := "http.4xx"
	if code >= 500 {
		kind = "http.5xx"
	}
	reason := "(streamed answer)"
	if !ctx.Response.IsBodyStream() {
		reason = string(truncate(ctx.Response.Body(), maxReasonBytes))
	}
	s.rlog.Info(kind, ratelog.Client(ctx.RemoteAddr()), "HTTP error answer",
		"route", r.name, "method", string(ctx.Method()), "status", code, "reason", reason)
}

// maxQueryLogBytes bounds the query text a slow-query line holds.
const maxQueryLogBytes = 8 << 10

// logSlowQuery logs a query that took at least SlowQueryThreshold at
// WARN with its API, duration, status and text: the request URI, and the
// body of a POST (OpenTSDB's JSON, PromQL's form); rate-limited per
// client and API (kind query.slow.<api>).
func (s *Server) logSlowQuery(ctx *fasthttp.RequestCtx, r *routeMetrics, d time.Duration) {
	args := []any{"api", r.api, "route", r.name, "duration", d, "status", ctx.Response.StatusCode(),
		"uri", string(truncate(ctx.RequestURI(), maxQueryLogBytes))}
	if !ctx.Request.IsBodyStream() {
		if body := ctx.Request.Body(); len(body) > 0 {
			args = append(args, "body", string(truncate(body, maxQueryLogBytes)))
		}
	}
	s.rlog.Warn(r.slowKind, ratelog.Client(ctx.RemoteAddr()), "slow query", args...)
}

// truncate cuts b to at most n bytes.
func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
