package api

import (
	"slices"

	"github.com/valyala/fasthttp"
)

// appendIndex appends the text page served on "/" until tsd has a web UI:
// what speaks on this port and which endpoints answer, generated from the
// route tables so it cannot drift from them.
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

// handleIndex serves "/".
func (s *Server) handleIndex(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeMethodNotAllowed(ctx)
		return
	}
	ctx.SetContentType(contentTypeText)
	ctx.Response.SetBodyRaw(s.indexPage) // immutable after New
}
