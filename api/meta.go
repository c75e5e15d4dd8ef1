package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index/lookup"
)

// metaAPI serves the metadata endpoints: suggest, search, uid, dropcaches
// (meta_*.go). It holds nothing per request.
type metaAPI struct {
	s     *Server
	svc   *lookup.Service // nil: the endpoints that need it answer 501
	valid *uid.Validator
}

func newMetaAPI(s *Server) *metaAPI {
	special := ""
	if s.opts.Ingest != nil {
		special = s.opts.Ingest.Options().AllowSpecialChars
	}
	return &metaAPI{s: s, svc: s.opts.Meta, valid: uid.NewValidator(uid.RulesOpenTSDB, special)}
}

// route returns the endpoint of a handler that needs the meta service,
// planned (501) when the server has none.
func (a *metaAPI) route(name string, h func(*metaAPI, *fasthttp.RequestCtx)) endpoint {
	if a.svc == nil {
		return planned(name)
	}
	return endpoint{name: name, handle: func(ctx *fasthttp.RequestCtx) { h(a, ctx) }}
}

// always returns the endpoint of a handler that works without the service.
func (a *metaAPI) always(name string, h func(*metaAPI, *fasthttp.RequestCtx)) endpoint {
	return endpoint{name: name, handle: func(ctx *fasthttp.RequestCtx) { h(a, ctx) }}
}

// apiMethod is OpenTSDB's getAPIMethod: a GET may carry
// method_override=post|put|delete.
func apiMethod(ctx *fasthttp.RequestCtx) string {
	m := string(ctx.Method())
	if m == fasthttp.MethodGet {
		if o := ctx.QueryArgs().Peek("method_override"); len(o) > 0 {
			return strings.ToUpper(string(o))
		}
	}
	return m
}

// subEndpoint returns the lower-cased path segment after the OpenTSDB
// endpoint: "assign" for /api/uid/assign and /api/v1/uid/assign.
func subEndpoint(path []byte) string {
	_, rest := nextSegment(path) // "api"
	seg, rest := nextSegment(rest)
	if len(seg) > 1 && (seg[0] == 'v' || seg[0] == 'V') && isDigit(seg[1]) {
		_, rest = nextSegment(rest) // the endpoint after the version
	}
	seg, _ = nextSegment(rest)
	return string(appendLower(nil, seg))
}

// maxMetaBody bounds a decompressed metadata request body; these are small
// JSON objects.
const maxMetaBody = 4 << 20

// requestBody returns the request body, inflated when gzip-encoded; nil
// and an answered error when it cannot be read.
func requestBody(ctx *fasthttp.RequestCtx) ([]byte, bool) {
	raw := ctx.PostBody()
	if !bytes.EqualFold(ctx.Request.Header.ContentEncoding(), []byte("gzip")) {
		return raw, true
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	var b []byte
	if err == nil {
		b, err = io.ReadAll(io.LimitReader(zr, maxMetaBody+1))
	}
	switch {
	case err != nil:
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to decompress the request body", err.Error())
		return nil, false
	case len(b) > maxMetaBody:
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "Request body too large", "")
		return nil, false
	}
	return b, true
}

// hasContent reports whether the request carries a body (OpenTSDB's
// HttpQuery.hasContent).
func hasContent(ctx *fasthttp.RequestCtx) bool { return len(ctx.PostBody()) > 0 }

// decodeBody reads a JSON body into v; false when it answered an error.
func decodeBody(ctx *fasthttp.RequestCtx, v any) bool {
	b, ok := requestBody(ctx)
	if !ok {
		return false
	}
	if len(bytes.TrimSpace(b)) == 0 {
		writeError(ctx, fasthttp.StatusBadRequest, "Missing message content",
			"Supply valid JSON formatted data in the body of your request")
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
		return false
	}
	return true
}

// requiredParam returns a non-empty query parameter, or answers OpenTSDB's
// "Missing parameter <code>name</code>".
func requiredParam(ctx *fasthttp.RequestCtx, name string) (string, bool) {
	v := ctx.QueryArgs().Peek(name)
	if len(v) == 0 {
		writeError(ctx, fasthttp.StatusBadRequest, "Missing parameter <code>"+name+"</code>", "")
		return "", false
	}
	return string(v), true
}

// writeJSON answers 200 (or code) with a JSON body.
func writeJSON(ctx *fasthttp.RequestCtx, code int, body []byte) {
	ctx.SetStatusCode(code)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(body)
}
