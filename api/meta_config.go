package api

import (
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/tsquery"
)

// getOrPost answers 405 unless the request is a GET or a POST.
func getOrPost(ctx *fasthttp.RequestCtx) bool {
	if ctx.IsGet() || ctx.IsPost() {
		return true
	}
	writeMethodNotAllowed(ctx)
	return false
}

// handleAggregators is /api/aggregators: the aggregator names in byte
// order.
func (a *metaAPI) handleAggregators(ctx *fasthttp.RequestCtx) {
	if getOrPost(ctx) {
		writeJSON(ctx, fasthttp.StatusOK, appendStringArray(nil, agg.Names()))
	}
}

// handleConfig is /api/config (every key and its value, as text, in byte
// order of the keys) and /api/config/filters.
func (a *metaAPI) handleConfig(ctx *fasthttp.RequestCtx) {
	if !getOrPost(ctx) {
		return
	}
	if subEndpoint(ctx.Path()) == "filters" {
		writeJSON(ctx, fasthttp.StatusOK, appendFilterTypes(nil))
		return
	}
	cfg := a.s.opts.Config
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	writeJSON(ctx, fasthttp.StatusOK, appendStringMap(nil, keys, cfg))
}

// appendFilterTypes appends {"<type>":{"examples":..,"description":..}}.
func appendFilterTypes(dst []byte) []byte {
	dst = append(dst, '{')
	for i, f := range tsquery.FilterTypes() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, f.Name)
		dst = append(dst, `:{"examples":`...)
		dst = appendJSONString(dst, f.Examples)
		dst = append(dst, `,"description":`...)
		dst = appendJSONString(dst, f.Description)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// handleDropCaches is /api/dropcaches (GET or DELETE): it empties the UID
// caches, the index's cached names and the writer's series caches.
func (a *metaAPI) handleDropCaches(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsDelete() {
		writeMethodNotAllowed(ctx)
		return
	}
	if a.svc != nil {
		a.svc.DropCaches()
	}
	if a.s.opts.Ingest != nil {
		a.s.opts.Ingest.DropCaches()
	}
	writeJSON(ctx, fasthttp.StatusOK, []byte(`{"status":"200","message":"Caches dropped"}`))
}
