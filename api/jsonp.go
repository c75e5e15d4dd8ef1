package api

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// jsonpParam is OpenTSDB's query-string parameter naming a JSONP callback:
// with ?jsonp=fn every JSON answer of an OpenTSDB endpoint, errors
// included and with its status unchanged, is written fn(<json>), still as
// application/json, as HttpJsonSerializer.serializeJSON and
// HttpSerializer.formatErrorV1 do.
const jsonpParam = "jsonp"

// jsonpKey is the request's user value holding its checked callback, set
// on OpenTSDB's routes only.
type jsonpKey struct{}

// jsonpOf returns the callback handle() checked for this request, nil when
// none (or on a route that ignores jsonp).
func jsonpOf(ctx *fasthttp.RequestCtx) []byte {
	cb, _ := ctx.UserValue(jsonpKey{}).([]byte)
	return cb
}

// maxCallback bounds a callback name.
const maxCallback = 128

// jsonpCallback returns the request's JSONP callback (nil when there is
// none) and false when it is not a dotted JavaScript identifier
// (jQuery123_456, ns.cb, $cb): OpenTSDB writes any text, which would let a
// link inject script into a page that loads the answer; tsd refuses it.
func jsonpCallback(ctx *fasthttp.RequestCtx) ([]byte, bool) {
	cb := ctx.QueryArgs().Peek(jsonpParam)
	if len(cb) == 0 {
		return nil, true
	}
	if len(cb) > maxCallback {
		return nil, false
	}
	part := 0 // length of the current dotted part
	for _, c := range cb {
		switch {
		case c == '.':
			if part == 0 {
				return nil, false
			}
			part = 0
			continue
		case c >= '0' && c <= '9':
			if part == 0 {
				return nil, false
			}
		case c == '_' || c == '$' || (c|0x20 >= 'a' && c|0x20 <= 'z'):
		default:
			return nil, false
		}
		part++
	}
	return cb, part > 0
}

// wrapJSONP rewrites a JSON answer as cb(<json>). Answers without a body
// (204) or that are not JSON are left alone; a gzipped one is inflated
// first (the wrapped answer is small next to a query's plain one). A
// streamed answer wraps itself as it is written (api/answer).
func wrapJSONP(ctx *fasthttp.RequestCtx, cb []byte) {
	resp := &ctx.Response
	if resp.IsBodyStream() || !bytes.HasPrefix(resp.Header.ContentType(), []byte("application/json")) {
		return
	}
	body := resp.Body()
	if bytes.Equal(resp.Header.ContentEncoding(), []byte("gzip")) {
		var err error
		if body, err = resp.BodyGunzip(); err != nil {
			return
		}
		resp.Header.Del(fasthttp.HeaderContentEncoding)
	}
	if len(body) == 0 {
		return
	}
	out := make([]byte, 0, len(cb)+len(body)+2)
	out = append(append(append(out, cb...), '('), body...)
	resp.SetBodyRaw(append(out, ')'))
}
