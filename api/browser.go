package api

import (
	"bytes"
	"errors"
	"regexp"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// A web page can make any browser that visits it send a GET (an image, a
// link, a script tag) to tsd with the visitor's network position, and read
// the answer of a JSONP GET. So by default a GET changes nothing (not even
// through OpenTSDB's method_override, which makes a GET act as another
// verb), JSONP is off, and no origin is allowed cross-origin reads
// (CORS). Options.AllowStateChangingGET, JSONP and CORSDomains turn each
// back on.

// stateChangingGETDetails is the 405's details for a state-changing GET.
const stateChangingGETDetails = "This request changes data, and changing data over GET (method_override included) " +
	"is refused since any web page can make a browser send a GET; use POST, PUT or DELETE, " +
	"or set tsd.http.allow_state_changing_get=true"

// refuseStateChangingGET answers 405 naming tsd.http.allow_state_changing_get
// when a request that changes state came as a GET, and reports whether it
// did. Handlers call it once they know the request changes state.
func (s *Server) refuseStateChangingGET(ctx *fasthttp.RequestCtx) bool {
	if s.opts.AllowStateChangingGET || !ctx.IsGet() {
		return false
	}
	s.rlog.Warn("http.state_changing_get", ratelog.Client(ctx.RemoteAddr()),
		"refusing a state-changing GET (tsd.http.allow_state_changing_get=false)", "path", string(ctx.Path()))
	writeError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed", stateChangingGETDetails)
	return true
}

// jsonpOffDetails is the 400's details for ?jsonp while JSONP is off.
const jsonpOffDetails = "JSONP is disabled (tsd.http.jsonp.enable=false): it lets any web page read the answer"

// DefaultCORSHeaders is OpenTSDB's tsd.http.request.cors_headers default.
const DefaultCORSHeaders = "Authorization, Content-Type, Accept, Origin, User-Agent, DNT, Cache-Control, " +
	"X-Mx-ReqToken, Keep-Alive, X-Requested-With, If-Modified-Since"

// corsHeadersRE is what OpenTSDB accepts as a header list: names separated
// by commas, no wildcard.
var corsHeadersRE = regexp.MustCompile(`^([a-zA-Z0-9_.-]+,\s*)*[a-zA-Z0-9_.-]+$`)

// cors is the parsed CORS configuration; domains is nil when CORS is off.
type cors struct {
	domains map[string]bool // upper-cased origins, or "*"
	headers string
}

// newCORS parses Options.CORSDomains and CORSHeaders as OpenTSDB's
// RpcHandler does: a comma list of origins or "*" alone, and a list of
// header names.
func newCORS(domains, headers string) (cors, error) {
	c := cors{headers: strings.TrimSpace(headers)}
	if !corsHeadersRE.MatchString(c.headers) {
		return c, errors.New("api: CORSHeaders (tsd.http.request.cors_headers) must be a comma list of HTTP header names, without wildcards")
	}
	if strings.TrimSpace(domains) == "" {
		return c, nil
	}
	parts := strings.Split(domains, ",")
	c.domains = make(map[string]bool, len(parts))
	for _, d := range parts {
		d = strings.TrimSpace(d)
		if d == "*" && len(parts) > 1 {
			return c, errors.New("api: CORSDomains (tsd.http.request.cors_domains) must be * or a list of origins, not both")
		}
		c.domains[strings.ToUpper(d)] = true
	}
	return c, nil
}

// apply follows OpenTSDB's RpcHandler.applyCorsConfig on an OpenTSDB
// route: without CORS, OPTIONS is 405; with it, a request with an Origin
// in the list gets the Access-Control headers (a preflight OPTIONS ends
// there, 200 without a body), and one from another origin is answered
// 200 with an error body and no Allow-Origin, so the browser refuses it.
// It reports whether the request was answered.
func (c *cors) apply(ctx *fasthttp.RequestCtx) bool {
	origin := ctx.Request.Header.Peek("Origin")
	if !ctx.IsOptions() && (c.domains == nil || len(origin) == 0) {
		return false
	}
	if c.domains == nil || len(origin) == 0 {
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed",
			"The HTTP method ["+string(ctx.Method())+"] is not permitted")
		return true
	}
	if !c.domains["*"] && !c.domains[string(bytes.ToUpper(origin))] {
		writeError(ctx, fasthttp.StatusOK, "CORS domain not allowed",
			"The domain ["+string(origin)+"] is not permitted access")
		return true
	}
	c.setHeaders(ctx, origin)
	if ctx.IsOptions() {
		ctx.SetStatusCode(fasthttp.StatusOK)
		return true
	}
	return false
}

// setHeaders sets the Access-Control headers for an allowed origin.
func (c *cors) setHeaders(ctx *fasthttp.RequestCtx, origin []byte) {
	h := &ctx.Response.Header
	h.SetBytesV("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
	h.Set("Access-Control-Allow-Headers", c.headers)
	h.Set("Vary", "Origin")
}

// reapply sets the headers again after the handler, whose error answers
// reset the response; the browser then lets the page read the error.
func (c *cors) reapply(ctx *fasthttp.RequestCtx) {
	if len(ctx.Response.Header.Peek("Access-Control-Allow-Origin")) == 0 {
		c.setHeaders(ctx, ctx.Request.Header.Peek("Origin"))
	}
}
