package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/stats"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
	tsdpromql "github.com/tsd-db/tsd/query/promql"
)

var errTruncated = errors.New("results truncated due to limit")

// Query serves /api/v1/query: an instant query at time (default now).
func (a *API) Query(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	f := form{ctx}
	limit, err := parseLimit(f.get("limit"))
	if err != nil {
		writeError(ctx, invalidParam("limit", err))
		return
	}
	ts, err := parseTimeParam(f.get("time"), "time", time.Now())
	if err != nil {
		writeError(ctx, invalidParam("time", err))
		return
	}
	a.run(ctx, f, limit, nil, func(qctx context.Context, eng *promql.Engine, opts promql.QueryOpts, _ parser.Expr) (promql.Query, error) {
		return eng.NewInstantQuery(qctx, a.q, opts, "0", ts)
	})
}

// QueryRange serves /api/v1/query_range.
func (a *API) QueryRange(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	f := form{ctx}
	limit, err := parseLimit(f.get("limit"))
	if err != nil {
		writeError(ctx, invalidParam("limit", err))
		return
	}
	r, aerr := parseRange(f.get("start"), f.get("end"), f.get("step"))
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	key := func(dst []byte, opts promql.QueryOpts) []byte { return a.cache.appendRangeKey(dst, f, r, limit, opts) }
	a.run(ctx, f, limit, key, func(qctx context.Context, eng *promql.Engine, opts promql.QueryOpts, expr parser.Expr) (promql.Query, error) {
		if t := expr.Type(); t != parser.ValueTypeVector && t != parser.ValueTypeScalar {
			return nil, fmt.Errorf("invalid expression type %q for range query, must be Scalar or instant Vector", parser.DocumentedType(t))
		}
		return eng.NewRangeQuery(qctx, a.q, opts, "0", r.start, r.end, r.step)
	})
}

// newQuery builds eng's query for the request's time or range with a
// placeholder expression ("0"), checking first that expr, parsed from
// the request, can be its expression; the caller then sets it (prepare).
// Parsing apart from the engine lets a tsd Parser keep compiled regex
// matchers (query/promql.Parser). The engine's check of the @ modifier
// and negative offsets sees only the placeholder, so both must be on
// (Options.Engine).
type newQuery func(ctx context.Context, eng *promql.Engine, opts promql.QueryOpts, expr parser.Expr) (promql.Query, error)

// prepare makes expr qry's expression, preprocessed for its range as the
// engine's NewRangeQuery and NewInstantQuery do; qry is closed on error.
func prepare(qry promql.Query, expr parser.Expr) error {
	st, ok := qry.Statement().(*parser.EvalStmt)
	if !ok { // unreachable: the engine's queries are evaluation statements
		qry.Close()
		return fmt.Errorf("promql: statement %T", qry.Statement())
	}
	var err error
	if st.Expr, err = promql.PreprocessExpr(expr, st.Start, st.End, st.Interval); err != nil {
		qry.Close()
		return err
	}
	return nil
}

// cacheKey appends the answer cache's key of a request to dst, nil when
// its answer is not kept.
type cacheKey func(dst []byte, opts promql.QueryOpts) []byte

// run parses the common parameters (timeout, lookback_delta, query), runs
// the query under a query slot and answers with its result, written in
// parts when long, or its error. key, when given, names the answer in
// the answer cache: a kept answer is given without a slot, a new whole
// one is kept. A kept answer is looked up before the query's context is
// made, with its key in a stack buffer: a hit allocates next to nothing.
func (a *API) run(ctx *fasthttp.RequestCtx, f form, limit int, key cacheKey, build newQuery) {
	timeout, aerr := parseTimeout(f.get("timeout"))
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	opts, aerr := queryOpts(f)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	var cr cacheRun
	if key != nil {
		var buf [256]byte
		var hit bool
		if cr, hit = a.respondCached(ctx, key(buf[:0], opts)); hit {
			return
		}
	}
	qctx, cancel := a.queryContext(timeout)
	qs := f.get("query")
	expr, err := a.parser.ParseExpr(qs)
	var qry promql.Query
	if err == nil {
		if qry, err = build(qctx, a.engine, opts, expr); err == nil {
			err = prepare(qry, expr)
		}
	}
	if err != nil {
		cancel()
		writeError(ctx, invalidParam("query", err))
		return
	}
	if !a.admit(ctx) {
		qry.Close()
		cancel()
		return
	}
	qry = a.keepGroupedNames(qctx, qry, opts, build)
	if cr.c != nil {
		cr.span(qry.Statement())
	}
	// Close recycles the result's slices: it runs once the answer is
	// written.
	done := func() { qry.Close(); cancel() }
	// A query without subqueries lets tsd's Queryable evaluate range
	// functions while reading (query/promql.WithPushdown, which rewrites
	// count_over_time in the statement when a.q is tsd's), unless the
	// client asks for statistics: pushed down, the engine would count one
	// sample per window instead of the samples in the windows.
	ectx := qctx
	if f.get("stats") == "" {
		ectx = tsdpromql.WithPushdown(qctx, a.q, qry.Statement())
	}
	res := qry.Exec(ectx)
	if res.Err != nil {
		a.release()
		done()
		writeError(ctx, execError(res.Err))
		return
	}
	if truncate(res, limit) {
		res.Warnings.Add(errTruncated) // counted in the cap, as Prometheus does
	}
	warnings, infos := noticeStrings(res.Warnings, qs)
	a.respondSource(ctx, cr.recording(newResultSource(*res, queryStats(qry, f.get("stats")), warnings, infos, done)))
}

// keepGroupedNames returns the query that answers qry's request: qry,
// or, when Options.NamesEngine is set and qry groups by metric names that
// a function drops and Prometheus's engine would refuse to merge
// (query/promql.NameCollision), a query of NamesEngine's running qry's
// statement written to keep them (query/promql.KeepGroupedNames), qry
// closed. A failed look-up leaves qry, which meets the same failure when
// it runs.
//
// The new query is given qry's statement, already parsed and preprocessed
// (which depends on the range alone, not on the engine): parsing the
// query again compiled each of its regex matchers again, and two more
// parses were a third of the CPU of TSBS's cpu-max-all-1.
func (a *API) keepGroupedNames(ctx context.Context, qry promql.Query, opts promql.QueryOpts, build newQuery) promql.Query {
	st, ok := qry.Statement().(*parser.EvalStmt)
	if a.opts.NamesEngine == nil || !ok {
		return qry
	}
	if hit, err := tsdpromql.NameCollision(ctx, a.q, st); !hit || err != nil {
		return qry
	}
	alt, err := build(ctx, a.opts.NamesEngine, opts, st.Expr)
	if err != nil {
		return qry
	}
	altSt, ok := alt.Statement().(*parser.EvalStmt)
	if !ok {
		alt.Close()
		return qry
	}
	altSt.Expr = tsdpromql.KeepGroupedNames(st.Expr)
	qry.Close()
	return alt
}

// queryStats is the "stats" member of the answer, nil without one: any
// non-empty stats parameter asks for the engine's statistics, as
// Prometheus's DefaultStatsRenderer renders them (stats.NewQueryStats,
// encoded with encoding/json as its stepStat.MarshalJSON expects).
func queryStats(qry promql.Query, param string) []byte {
	if param == "" {
		return nil
	}
	b, err := json.Marshal(stats.NewQueryStats(qry.Stats()))
	if err != nil { // unreachable: finite floats and integers
		return nil
	}
	return b
}

// queryOpts reads lookback_delta and stats ("all" asks for per-step
// statistics, which the engine gives only when built with them); the
// error is bad_data without the parameter prefix, as in Prometheus's
// extractQueryOpts.
func queryOpts(f form) (promql.QueryOpts, *apiError) {
	var lookback time.Duration
	if s := f.get("lookback_delta"); s != "" {
		d, err := ParseDuration(s)
		if err != nil {
			return nil, badData(fmt.Errorf("error parsing lookback delta duration: %w", err))
		}
		lookback = d
	}
	return promql.NewPrometheusQueryOpts(f.get("stats") == "all", lookback), nil
}

// truncate keeps the first limit series of a matrix or vector result and
// reports whether it dropped any; 0 means no limit.
func truncate(res *promql.Result, limit int) bool {
	if limit <= 0 {
		return false
	}
	switch v := res.Value.(type) {
	case promql.Matrix:
		if len(v) > limit {
			res.Value = v[:limit]
			return true
		}
	case promql.Vector:
		if len(v) > limit {
			res.Value = v[:limit]
			return true
		}
	}
	return false
}

// FormatQuery serves /api/v1/format_query: the query pretty-printed.
func (a *API) FormatQuery(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	expr, err := parser.ParseExpr(form{ctx}.get("query"))
	if err != nil {
		writeError(ctx, invalidParam("query", err))
		return
	}
	pretty := expr.Pretty(0)
	a.respond(ctx, nil, nil, func(b []byte) []byte { return jsonw.HTML.AppendString(b, pretty) })
}

// QueryExemplars serves /api/v1/query_exemplars. tsd stores no exemplars,
// so a valid request gets an empty list; Grafana's start-up probe only
// checks for success. A query without selectors is answered 204 with no
// body, as Prometheus's queryExemplars (no data) and its handler wrapper
// do.
func (a *API) QueryExemplars(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	f := form{ctx}
	start, err := parseTimeParam(f.get("start"), "start", MinTime)
	if err != nil {
		writeError(ctx, invalidParam("start", err))
		return
	}
	end, err := parseTimeParam(f.get("end"), "end", MaxTime)
	if err != nil {
		writeError(ctx, invalidParam("end", err))
		return
	}
	if end.Before(start) {
		writeError(ctx, badData(errors.New("end timestamp must not be before start timestamp")))
		return
	}
	expr, err := parser.ParseExpr(f.get("query"))
	if err != nil {
		writeError(ctx, badData(err))
		return
	}
	if len(parser.ExtractSelectors(expr)) == 0 {
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	a.respond(ctx, nil, nil, func(b []byte) []byte { return append(b, "[]"...) })
}
