package api

import (
	"bytes"
	"context"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/query/expr"
	"github.com/tsd-db/tsd/query/tsquery"
)

// handleQueryExp serves /api/query/exp, OpenTSDB 2.3's expression query:
// a POSTed JSON body (gzip allowed) run on the /api/query engine. Errors
// map as /api/query's do.
func (s *Server) handleQueryExp(ctx *fasthttp.RequestCtx) {
	if s.opts.Query == nil {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/query/exp", "")
		return
	}
	method := string(ctx.Method())
	if o := ctx.QueryArgs().Peek("method_override"); len(o) > 0 && method == fasthttp.MethodGet {
		method = string(bytes.ToUpper(o))
	}
	if method != fasthttp.MethodPost {
		writeMethodNotAllowed(ctx)
		return
	}
	q, err := s.parseQueryExp(ctx)
	if err != nil {
		writeQueryError(ctx, err)
		return
	}
	if !s.admitQuery(ctx) {
		return
	}
	res, err := expr.Run(s.work, s.opts.Query, q)
	if err != nil {
		s.queries.Release()
		s.queryFailed(ctx, err)
		return
	}
	if err := answer.Write(ctx, &expSource{res: res}, s.openTSDBAnswer(ctx, false)); err != nil {
		s.queryFailed(ctx, err)
	}
}

// expSource writes an expression answer, held in memory, in parts.
type expSource struct {
	res *expr.Result
	c   expr.JSONCursor
}

func (e *expSource) Next(_ context.Context, dst []byte, max int) ([]byte, bool, error) {
	dst, done := e.res.AppendJSONPart(dst, &e.c, max)
	return dst, done, nil
}

func (e *expSource) Close() {}

// parseQueryExp reads the body, inflating a gzip one.
func (s *Server) parseQueryExp(ctx *fasthttp.RequestCtx) (*expr.Query, error) {
	body := ctx.PostBody()
	if bytes.EqualFold(ctx.Request.Header.ContentEncoding(), []byte("gzip")) {
		var err error
		if body, err = gunzipLimited(body, s.opts.MaxRequestBodySize); err != nil {
			if errors.Is(err, errBodyTooLarge) {
				return nil, err
			}
			return nil, &tsquery.Error{Msg: "Unable to decompress the request body", Details: err.Error(), Err: err}
		}
	}
	return expr.Parse(body)
}
