package api

import (
	"bytes"
	"errors"
	"io"
	"net/url"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/storage"
)

// querySubroutes are the endpoints under /api/query/<name>, which
// OpenTSDB's router hands to the query endpoint. A nil handler answers 501
// naming the endpoint; a name not listed is the query itself, as in
// OpenTSDB's QueryRpc. The issue that builds one sets its handler here.
var querySubroutes = map[string]func(*Server, *fasthttp.RequestCtx){
	"last": (*Server).handleQueryLast,
	"exp":  (*Server).handleQueryExp,
	"gexp": (*Server).handleQueryGexp,
}

// handleQuery serves /api/query (GET with m= or tsuid=, POST with a JSON
// body, DELETE) and dispatches /api/query/<sub>. The Prometheus
// /api/v1/query handler passes OpenTSDB-shaped requests here.
func (s *Server) handleQuery(ctx *fasthttp.RequestCtx) {
	if ctx.IsDelete() && (s.opts.Query == nil || !s.opts.Query.Options().AllowDelete) {
		// OpenTSDB's QueryRpc.execute refuses the verb before reading the
		// query or picking the sub-endpoint.
		writeError(ctx, fasthttp.StatusBadRequest, "Bad request", opentsdb.DeleteDisabled)
		return
	}
	if sub := querySubroute(ctx.Path()); sub != "" {
		if h, ok := querySubroutes[sub]; ok {
			if h == nil {
				writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/query/"+sub, "")
				return
			}
			h(s, ctx)
			return
		}
	}
	if s.opts.Query == nil {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/query", "")
		return
	}
	q, ok := s.parseQuery(ctx)
	if !ok || (q.Delete && s.refuseStateChangingGET(ctx)) || !s.admitQuery(ctx) {
		return
	}
	// Not ctx: a context derived from the RequestCtx reads fasthttp's
	// Server.done while Close writes it (a race). Options.Timeout bounds
	// the query instead.
	run := s.qlog.start(ctx, opentsdb.AppendQueryJSON(nil, q), requestUser(ctx))
	st, err := s.opts.Query.Stream(s.work, q, opentsdb.JSONOptions{Arrays: ctx.QueryArgs().Has("arrays")})
	if err != nil {
		s.queries.Release()
		s.qlog.end(run, errStatus(err), err, false)
		s.queryFailed(ctx, err)
		return
	}
	o := s.openTSDBAnswer(ctx, true)
	o.Ended = func(err error, streamed bool) {
		status := errStatus(err)
		if streamed {
			status = fasthttp.StatusOK // sent before the answer ended
		}
		s.qlog.end(run, status, err, err == nil)
	}
	if err := answer.Write(ctx, streamSource{st}, o); err != nil {
		s.queryFailed(ctx, err)
		return
	}
	s.qlog.wrote(run)
}

// querySubroute returns the lower-cased segment after the endpoint in
// /api/query/<sub> or /api/v<N>/query/<sub>, or "".
func querySubroute(path []byte) string {
	seg, rest := nextSegment(path) // "api"
	if !bytes.EqualFold(seg, []byte("api")) {
		return ""
	}
	seg, rest = nextSegment(rest)
	if len(seg) > 1 && (seg[0] == 'v' || seg[0] == 'V') && isDigit(seg[1]) {
		_, rest = nextSegment(rest)
	}
	sub, _ := nextSegment(rest)
	return string(appendLower(nil, sub))
}

// parseQuery reads the query of any verb: GET from the query string
// (?method_override=post|delete as OpenTSDB allows), POST from the JSON
// body, DELETE from the body when there is one and with delete set. On
// failure it has answered the request.
func (s *Server) parseQuery(ctx *fasthttp.RequestCtx) (*tsquery.TSQuery, bool) {
	method := string(ctx.Method())
	if o := ctx.QueryArgs().Peek("method_override"); len(o) > 0 && method == fasthttp.MethodGet {
		method = string(bytes.ToUpper(o))
	}
	var (
		q   *tsquery.TSQuery
		err error
	)
	switch method {
	case fasthttp.MethodGet:
		q, err = tsquery.ParseGET(queryValues(ctx))
	case fasthttp.MethodPost, fasthttp.MethodDelete:
		q, err = s.parseQueryBody(ctx, method)
		// As QueryRpc.handleQuery: the API method (the verb, or a GET's
		// method_override) deletes only while deletes are allowed; with
		// them off, method_override=delete is a plain read (the DELETE verb
		// itself was refused in handleQuery).
		if err == nil && method == fasthttp.MethodDelete && s.opts.Query.Options().AllowDelete {
			q.Delete = true
		}
	default:
		writeMethodNotAllowed(ctx)
		return nil, false
	}
	if err != nil {
		writeQueryError(ctx, err)
		return nil, false
	}
	if q.Delete && !s.allowAdmin(ctx, "/api/query") {
		return nil, false
	}
	return q, true
}

// parseQueryBody parses a POSTed query, gunzipping a gzip body; a DELETE
// without a body, or a GET with method_override, reads the query string.
func (s *Server) parseQueryBody(ctx *fasthttp.RequestCtx, method string) (*tsquery.TSQuery, error) {
	body := ctx.PostBody()
	if len(body) == 0 && (method == fasthttp.MethodDelete || string(ctx.Method()) == fasthttp.MethodGet) {
		return tsquery.ParseGET(queryValues(ctx))
	}
	if bytes.EqualFold(ctx.Request.Header.ContentEncoding(), []byte("gzip")) {
		var err error
		if body, err = gunzipLimited(body, s.opts.MaxRequestBodySize); err != nil {
			return nil, &tsquery.Error{Msg: "Unable to decompress the request body", Details: err.Error(), Err: err}
		}
	}
	return tsquery.ParsePOST(body)
}

// gunzipLimited inflates a gzip body of at most limit bytes.
func gunzipLimited(raw []byte, limit int) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, errBodyTooLarge
	}
	return out, nil
}

// queryValues copies the query string into url.Values (fasthttp's args
// must not escape the handler; url.Values copies).
func queryValues(ctx *fasthttp.RequestCtx) url.Values {
	v := url.Values{}
	ctx.QueryArgs().VisitAll(func(k, val []byte) {
		v.Add(string(k), string(val))
	})
	return v
}

// writeQueryError maps the query engine's errors to OpenTSDB's statuses:
// 400 for the request's faults, 413 for a crossed limit, 408 for the
// timeout, 503 (Retry-After) when the store is unavailable, else 500.
func writeQueryError(ctx *fasthttp.RequestCtx, err error) {
	code, msg, details := queryErrorFields(err)
	writeError(ctx, code, msg, details)
	if code == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	}
}

// queryErrorFields returns the status, message and details OpenTSDB's
// error object carries for a query's error.
func queryErrorFields(err error) (code int, msg, details string) {
	var (
		te *tsquery.Error
		le *read.LimitError
		oe *opentsdb.OutputLimitError
		to *opentsdb.TimeoutError
	)
	switch {
	case errors.As(err, &te):
		return fasthttp.StatusBadRequest, te.Msg, te.Details
	case errors.Is(err, errBodyTooLarge):
		return fasthttp.StatusRequestEntityTooLarge, "Request body too large", err.Error()
	case errors.As(err, &le):
		return fasthttp.StatusRequestEntityTooLarge, le.Error(), ""
	case errors.As(err, &oe):
		return fasthttp.StatusRequestEntityTooLarge, oe.Error(), ""
	case errors.As(err, &to):
		return fasthttp.StatusRequestTimeout, to.Error(), ""
	case errors.Is(err, storage.ErrRetryable), errors.Is(err, storage.ErrClosed):
		return fasthttp.StatusServiceUnavailable, "Storage unavailable, retry later", err.Error()
	}
	return fasthttp.StatusInternalServerError, "Query failed", err.Error()
}
