package api

import (
	"bytes"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/query/last"
	"github.com/tsd-db/tsd/query/tsquery"
)

// handleQueryLast serves /api/query/last: GET with timeseries=, tsuids=,
// resolve and back_scan, or POST with OpenTSDB's JSON body (gzip allowed).
// The work runs under the server's work context, not the RequestCtx:
// fasthttp's RequestCtx.Done races with Server.ShutdownWithContext when a
// derived context watches it (seen under -race). Errors map as /api/query's do: 400 with OpenTSDB's message for the
// request's faults, 413 for too many series.
func (s *Server) handleQueryLast(ctx *fasthttp.RequestCtx) {
	if s.opts.Last == nil {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/query/last", "")
		return
	}
	q, ok := s.parseQueryLast(ctx)
	if !ok || !s.admitQuery(ctx) {
		return
	}
	pts, err := s.opts.Last.Last(s.work, q)
	if err != nil {
		s.queries.Release()
		writeQueryError(ctx, err)
		return
	}
	src := &answer.List{Open: []byte("["), End: []byte("]"), N: len(pts),
		Elem: func(dst []byte, i int) []byte { return last.AppendPoint(dst, &pts[i]) }}
	if err := answer.Write(ctx, src, s.openTSDBAnswer(ctx, false)); err != nil {
		writeQueryError(ctx, err)
	}
}

// parseQueryLast reads the request of either verb (GET may carry
// ?method_override=post). On failure it has answered the request.
func (s *Server) parseQueryLast(ctx *fasthttp.RequestCtx) (*last.Query, bool) {
	method := string(ctx.Method())
	if o := ctx.QueryArgs().Peek("method_override"); len(o) > 0 && method == fasthttp.MethodGet {
		method = string(bytes.ToUpper(o))
	}
	var (
		q   *last.Query
		err error
	)
	switch method {
	case fasthttp.MethodGet:
		q, err = last.ParseGET(queryValues(ctx))
	case fasthttp.MethodPost:
		body := ctx.PostBody()
		if bytes.EqualFold(ctx.Request.Header.ContentEncoding(), []byte("gzip")) {
			if body, err = gunzipLimited(body, s.opts.MaxRequestBodySize); err != nil && !errors.Is(err, errBodyTooLarge) {
				err = &tsquery.Error{Msg: "Unable to decompress the request body", Details: err.Error(), Err: err}
			}
		}
		if err == nil {
			q, err = last.ParsePOST(body)
		}
	default:
		writeMethodNotAllowed(ctx)
		return nil, false
	}
	if err != nil {
		writeQueryError(ctx, err)
		return nil, false
	}
	return q, true
}
