package api

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

const (
	contentTypeJSON = "application/json; charset=UTF-8"
	contentTypeText = "text/plain; charset=UTF-8"
)

// appendError appends OpenTSDB's error JSON
// {"error":{"code":C,"message":M[,"details":D]}}; details is left out when
// empty, as OpenTSDB does.
func appendError(dst []byte, code int, message, details string) []byte {
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonw.JSON.AppendString(dst, message)
	if details != "" {
		dst = append(dst, `,"details":`...)
		dst = jsonw.JSON.AppendString(dst, details)
	}
	return append(dst, "}}"...)
}

// writeError answers the request with OpenTSDB's error JSON and status code.
func writeError(ctx *fasthttp.RequestCtx, code int, message, details string) {
	ctx.Response.Reset()
	ctx.SetStatusCode(code)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(appendError(nil, code, message, details))
}

// writeMethodNotAllowed answers 405 with OpenTSDB's wording.
func writeMethodNotAllowed(ctx *fasthttp.RequestCtx) {
	writeError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed",
		"The HTTP method ["+string(ctx.Method())+"] is not permitted for this endpoint")
}
