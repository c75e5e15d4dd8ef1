package api

import (
	"maps"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
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
		writeJSON(ctx, fasthttp.StatusOK, jsonw.JSON.AppendStrings(nil, agg.Names()))
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
	writeJSON(ctx, fasthttp.StatusOK, jsonw.JSON.AppendSortedMap(nil, hideSecrets(a.s.opts.Config)))
}

// hiddenValue stands for the value of a secret key in /api/config.
const hiddenValue = "********"

// secretWords, in a key's name, mark a value that must not be shown:
// /api/config is readable by the read role and shown by the web UI. Keys
// that name a file holding a secret (tsd.network.tls.key_file) show the
// path, which is no secret.
var secretWords = []string{"password", "passwd", "secret", "token", "credential", "apikey", "api_key", "private_key"}

// hideSecrets returns config with the non-empty values of secret keys
// replaced by hiddenValue; config itself is not changed.
func hideSecrets(config map[string]string) map[string]string {
	var out map[string]string
	for k, v := range config {
		if v == "" || !isSecretKey(k) {
			continue
		}
		if out == nil {
			out = maps.Clone(config)
		}
		out[k] = hiddenValue
	}
	if out == nil {
		return config
	}
	return out
}

func isSecretKey(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// appendFilterTypes appends {"<type>":{"examples":..,"description":..}}.
func appendFilterTypes(dst []byte) []byte {
	dst = append(dst, '{')
	for i, f := range tsquery.FilterTypes() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.JSON.AppendKey(dst, f.Name)
		dst = append(dst, `{"examples":`...)
		dst = jsonw.JSON.AppendString(dst, f.Examples)
		dst = append(dst, `,"description":`...)
		dst = jsonw.JSON.AppendString(dst, f.Description)
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
	if a.s.refuseStateChangingGET(ctx) {
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
