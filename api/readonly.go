package api

import (
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest"
)

// writeReadOnly answers a write refused because the daemon is read-only
// (ingest.Gate: a full disk): 503 with Retry-After, the reason in the
// details. It reports false, answering nothing, when the gate is open.
func writeReadOnly(ctx *fasthttp.RequestCtx, g *ingest.Gate) bool {
	err := g.Err()
	if err == nil {
		return false
	}
	writeError(ctx, fasthttp.StatusServiceUnavailable, "Read-only", err.Error())
	ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	return true
}
