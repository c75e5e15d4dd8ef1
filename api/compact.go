package api

import (
	"strconv"

	"github.com/valyala/fasthttp"
)

// CompactResult is the answer of POST /api/compact: the rows and points
// the flush wrote from the head and the queued rows the compaction
// rewrote.
type CompactResult struct {
	FlushedRows, FlushedPoints, CompactedRows int64
}

// handleCompact is POST /api/compact, an operator's route (tsd compact
// --url): it brings the store to the state it settles in: every row still
// in the head flushed, the compaction queue drained, the store compacted
// (on the embedded engine, pebble's whole keyspace). It answers when that
// is done, 200 with the counts, 500 when a step failed; GET is 405.
func (s *Server) handleCompact(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	if s.opts.Compact == nil {
		writeError(ctx, fasthttp.StatusNotImplemented, "Compaction is not available", "/api/compact")
		return
	}
	res, err := s.opts.Compact(ctx)
	if err != nil {
		writeError(ctx, fasthttp.StatusInternalServerError, "Compaction failed", err.Error())
		return
	}
	b := []byte("{")
	for i, f := range []struct {
		k string
		v int64
	}{{"flushedRows", res.FlushedRows}, {"flushedPoints", res.FlushedPoints}, {"compactedRows", res.CompactedRows}} {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(strconv.AppendQuote(b, f.k), ':'), f.v, 10)
	}
	writeJSON(ctx, fasthttp.StatusOK, append(b, '}'))
}
