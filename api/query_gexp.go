package api

import (
	"context"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/query/gexp"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
)

// handleQueryGexp serves /api/query/gexp, OpenTSDB 2.4's Graphite-style
// expressions: a GET with /api/query's parameters and exp= expressions.
// OpenTSDB reads no expressions from a POST body (and then fails with a
// NullPointerException); tsd refuses it with a 400 that says where they go.
func (s *Server) handleQueryGexp(ctx *fasthttp.RequestCtx) {
	if s.opts.Query == nil {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/query/gexp", "")
		return
	}
	if !ctx.IsGet() {
		if ctx.IsPost() {
			writeQueryError(ctx, &tsquery.Error{Msg: "Expressions are read from the exp parameters of a GET"})
			return
		}
		writeMethodNotAllowed(ctx)
		return
	}
	if !s.admitQuery(ctx) {
		return
	}
	res, err := gexp.Run(s.work, s.opts.Query, queryValues(ctx))
	if err != nil {
		s.queries.Release()
		s.queryFailed(ctx, err)
		return
	}
	src := &gexpSource{res: res, o: opentsdb.JSONOptions{Arrays: ctx.QueryArgs().Has("arrays")}}
	if err := answer.Write(ctx, src, s.openTSDBAnswer(ctx, true)); err != nil {
		s.queryFailed(ctx, err)
	}
}

// gexpSource writes an expression answer, held in memory, at once.
type gexpSource struct {
	res *opentsdb.Result
	o   opentsdb.JSONOptions
}

func (g *gexpSource) Next(_ context.Context, dst []byte, _ int) ([]byte, bool, error) {
	return g.res.AppendJSON(dst, g.o), true, nil
}

func (g *gexpSource) Close() {
	if g.res != nil {
		g.res.Release()
		g.res = nil
	}
}
