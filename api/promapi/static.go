package promapi

import (
	"runtime"

	"github.com/valyala/fasthttp"
)

// Metadata serves /api/v1/metadata. tsd keeps no metric help or type, so
// the map is empty; Grafana's autocomplete then shows names only.
func (a *API) Metadata(ctx *fasthttp.RequestCtx) {
	a.static(ctx, "{}")
}

// Rules serves /api/v1/rules: tsd evaluates no recording or alerting
// rules.
func (a *API) Rules(ctx *fasthttp.RequestCtx) {
	a.static(ctx, `{"groups":[]}`)
}

// BuildInfo serves /api/v1/status/buildinfo. It leaves out "features",
// whose presence makes Grafana take the server for Mimir.
func (a *API) BuildInfo(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	a.respond(ctx, nil, nil, func(b []byte) []byte {
		b = append(b, `{"version":`...)
		b = appendHTMLString(b, a.opts.BuildVersion)
		b = append(b, `,"revision":`...)
		b = appendHTMLString(b, a.opts.Revision)
		b = append(b, `,"branch":"","buildUser":"","buildDate":"","goVersion":`...)
		b = appendHTMLString(b, runtime.Version())
		return append(b, '}')
	})
}

// static answers a fixed data document.
func (a *API) static(ctx *fasthttp.RequestCtx, data string) {
	if !allowed(ctx) {
		return
	}
	a.respond(ctx, nil, nil, func(b []byte) []byte { return append(b, data...) })
}
