package api

import (
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

const (
	contentTypeJSON = "application/json; charset=UTF-8"
	contentTypeText = "text/plain; charset=UTF-8"
)

// appendJSONString appends s as a JSON string literal. Non-ASCII text is
// kept as UTF-8, as OpenTSDB's Jackson writer does; invalid UTF-8 becomes
// U+FFFD so the output is always valid JSON.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, n := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for a bad byte
			i += n
			continue
		}
		dst = appendJSONByte(dst, c)
		i++
	}
	return append(dst, '"')
}

// appendJSONByte appends one ASCII byte, escaped as JSON requires.
func appendJSONByte(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if c < 0x20 {
		const hex = "0123456789abcdef"
		return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
	}
	return append(dst, c)
}

// appendError appends OpenTSDB's error JSON
// {"error":{"code":C,"message":M[,"details":D]}}; details is left out when
// empty, as OpenTSDB does.
func appendError(dst []byte, code int, message, details string) []byte {
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, message)
	if details != "" {
		dst = append(dst, `,"details":`...)
		dst = appendJSONString(dst, details)
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
