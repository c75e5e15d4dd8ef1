package api

import (
	"bytes"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/ui"
)

// appendIndex appends the text page served on "/" to clients that do not
// ask for HTML (curl, scripts): what speaks on this port and which
// endpoints answer, generated from the route tables so it cannot drift
// from them.
func (r *router) appendIndex(dst []byte, version string) []byte {
	dst = append(dst, "tsd "...)
	dst = append(dst, version...)
	dst = append(dst, "\n\nThis port speaks OpenTSDB's telnet protocol and HTTP API, the Prometheus\n"+
		"HTTP API and remote_write, and InfluxDB line protocol.\n\nEndpoints that answer:\n"...)
	built, todo := r.endpointNames()
	for _, n := range built {
		dst = append(append(append(dst, "  "...), n...), '\n')
	}
	dst = append(dst, "\nEndpoints not built yet (501):\n"...)
	for _, n := range todo {
		dst = append(append(append(dst, "  "...), n...), '\n')
	}
	return dst
}

// endpointNames lists the built and planned endpoint names, sorted.
func (r *router) endpointNames() (built, todo []string) {
	add := func(e endpoint) {
		if e.handle != nil {
			built = append(built, e.name)
		} else {
			todo = append(todo, e.name)
		}
	}
	for _, e := range r.paths {
		add(e)
	}
	for _, e := range r.openTSDB {
		add(e)
	}
	slices.Sort(built)
	slices.Sort(todo)
	return built, todo
}

// handleIndex serves "/": the web UI's page (package api/ui) to a client
// whose Accept asks for HTML, as a browser does, and the text index to
// any other.
func (s *Server) handleIndex(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeMethodNotAllowed(ctx)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderVary, "Accept")
	if ui.WantsHTML(string(ctx.Request.Header.Peek(fasthttp.HeaderAccept))) {
		serveUIFile(ctx, ui.Page())
		return
	}
	ctx.SetContentType(contentTypeText)
	ctx.Response.SetBodyRaw(s.indexPage) // immutable after New
}

// handleUIFile serves the web UI's scripts, styles and chart library
// under ui.Prefix.
func handleUIFile(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeMethodNotAllowed(ctx)
		return
	}
	f, ok := ui.Asset(string(ctx.Path()))
	if !ok {
		writeError(ctx, fasthttp.StatusNotFound, "Endpoint not found", "")
		return
	}
	serveUIFile(ctx, f)
}

// serveUIFile answers with one of the UI's files under its
// Content-Security-Policy, revalidated by ETag on each use so a new
// binary's files replace the old at once.
func serveUIFile(ctx *fasthttp.RequestCtx, f ui.File) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", ui.ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set(fasthttp.HeaderCacheControl, "no-cache")
	h.Set(fasthttp.HeaderETag, f.ETag)
	if inm := ctx.Request.Header.Peek(fasthttp.HeaderIfNoneMatch); len(inm) > 0 && bytes.Contains(inm, []byte(f.ETag)) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetContentType(f.ContentType)
	ctx.Response.SetBodyRaw(f.Body) // embedded, never written
}
