package promapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/admit"
	"github.com/tsd-db/tsd/api/answer"
	tsdpromql "github.com/tsd-db/tsd/query/promql"
)

// maxNotices caps the warnings and the infos a response carries, as
// Prometheus does.
const maxNotices = 10

// contentTypeJSON is Prometheus's response content type.
const contentTypeJSON = "application/json"

// API serves the Prometheus HTTP API endpoints over one Queryable with one
// PromQL engine. Its handlers are fasthttp handlers; it is safe for
// concurrent use.
type API struct {
	opts   Options
	q      storage.Queryable
	engine *promql.Engine
	// ownEngine: New built engine, so Close closes it.
	ownEngine bool
	bufs      sync.Pool    // *[]byte response bodies
	cache     *AnswerCache // nil: none
	parser    *tsdpromql.Parser
}

// New returns an API for opts after EnsureDefaults. opts must have passed
// Validate and have a Queryable.
func New(opts Options) *API {
	opts.EnsureDefaults()
	a := &API{opts: opts, q: opts.Queryable, engine: opts.Engine, cache: opts.Cache,
		parser: tsdpromql.NewParser(opts.MatcherCacheBytes)}
	if a.engine == nil {
		a.ownEngine = true
		// A subquery without a step (x[1h:]) takes Prometheus's default
		// global evaluation interval; without the function the engine
		// dereferences nil.
		subqueryStep := tsdpromql.DefaultSubqueryStep.Milliseconds()
		a.engine = promql.NewEngine(promql.EngineOpts{
			Logger:                   opts.Logger,
			MaxSamples:               opts.MaxSamples,
			Timeout:                  opts.Timeout,
			LookbackDelta:            opts.LookbackDelta,
			EnableAtModifier:         true,
			EnableNegativeOffset:     true,
			NoStepSubqueryIntervalFn: func(int64) int64 { return subqueryStep },
		})
	}
	return a
}

// Close stops the background work of an engine New built. The API must
// not serve requests afterwards.
func (a *API) Close() error {
	if !a.ownEngine {
		return nil
	}
	return a.engine.Close()
}

// HasQuery reports whether a request to /api/v1/query carries a query
// parameter, in the URL or a form body: only then is it Prometheus's; an
// OpenTSDB query (m, tsuid or a JSON body) has none.
func HasQuery(ctx *fasthttp.RequestCtx) bool {
	return ctx.QueryArgs().Has("query") || ctx.PostArgs().Has("query") || len(form{ctx}.multipart("query")) > 0
}

// form reads request parameters the way net/http's FormValue does: an
// application/x-www-form-urlencoded body first, then the URL, then a
// multipart/form-data body (ParseMultipartForm appends its values after
// the URL's).
type form struct{ ctx *fasthttp.RequestCtx }

// get returns the first value of name, "" when absent. The string is a
// copy: it may outlive the request.
func (f form) get(name string) string { return string(f.peek(name)) }

// peek returns the first value of name, nil when absent: the body's form,
// then the URL's, then a multipart body's. The bytes are valid until the
// request ends.
func (f form) peek(name string) []byte {
	if v := f.ctx.PostArgs().Peek(name); v != nil {
		return v
	}
	if v := f.ctx.QueryArgs().Peek(name); v != nil {
		return v
	}
	if vs := f.multipart(name); len(vs) > 0 {
		return []byte(vs[0])
	}
	return nil
}

// all returns every value of name in get's order.
func (f form) all(name string) []string {
	var out []string
	for _, v := range f.ctx.PostArgs().PeekMulti(name) {
		out = append(out, string(v))
	}
	for _, v := range f.ctx.QueryArgs().PeekMulti(name) {
		out = append(out, string(v))
	}
	return append(out, f.multipart(name)...)
}

// multipart returns the values of name in a multipart/form-data body; nil
// for any other body, or one that does not parse (FormValue ignores the
// error too). fasthttp parses the form once per request.
func (f form) multipart(name string) []string {
	if len(f.ctx.Request.Header.MultipartFormBoundary()) == 0 {
		return nil
	}
	mf, err := f.ctx.MultipartForm()
	if err != nil {
		return nil
	}
	return mf.Value[name]
}

// allowed sets the CORS headers and reports whether the handler should
// go on: OPTIONS (a browser's preflight) is answered 204 with no body, as
// Prometheus answers it on every API path, and any method other than
// GET, HEAD or POST 405.
func allowed(ctx *fasthttp.RequestCtx) bool {
	setCORS(ctx)
	switch {
	case ctx.IsGet() || ctx.IsPost() || ctx.IsHead():
		return true
	case ctx.IsOptions():
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return false
	}
	writeError(ctx, &apiError{errorMethod, errMethod(ctx)})
	return false
}

// setCORS sets the headers Prometheus's httputil.SetCORS sets with its
// default origin pattern ".*": "Vary: Origin" always, and for a
// cross-origin request (one with an Origin header) the allowed headers,
// methods and exposed headers, and any origin allowed.
func setCORS(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Add(fasthttp.HeaderVary, "Origin")
	if len(ctx.Request.Header.Peek(fasthttp.HeaderOrigin)) == 0 {
		return
	}
	h.Set(fasthttp.HeaderAccessControlAllowHeaders, "Accept, Authorization, Content-Type, Origin")
	h.Set(fasthttp.HeaderAccessControlAllowMethods, "GET, POST, OPTIONS")
	h.Set(fasthttp.HeaderAccessControlExposeHeaders, "Date")
	h.Set(fasthttp.HeaderAccessControlAllowOrigin, "*")
}

// noTimeout is parseTimeout's answer for a request without one; a given
// timeout of 0 is kept, and expires at once as in Prometheus.
const noTimeout time.Duration = -1

// parseTimeout reads the timeout parameter: noTimeout when absent.
func parseTimeout(timeout string) (time.Duration, *apiError) {
	if timeout == "" {
		return noTimeout, nil
	}
	d, err := ParseDuration(timeout)
	if err != nil {
		return 0, invalidParam("timeout", err)
	}
	return max(d, 0), nil // a negative one expires at once too
}

// queryContext derives a query's context from Options.Context (see
// there why not from the request), bounded by timeout unless noTimeout.
func (a *API) queryContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout == noTimeout {
		return context.WithCancel(a.opts.Context)
	}
	return context.WithTimeout(a.opts.Context, timeout)
}

// respond answers 200 with the success envelope around data.
func (a *API) respond(ctx *fasthttp.RequestCtx, warnings, infos []string, data func([]byte) []byte) {
	bp := a.getBuf()
	*bp = appendSuccess((*bp)[:0], warnings, infos, data)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(*bp)
	a.putBuf(bp)
}

// admit takes a query slot, waiting at most Options.Timeout; false when
// it answered 503 "unavailable" with Retry-After instead.
func (a *API) admit(ctx *fasthttp.RequestCtx) bool {
	l := a.opts.Limiter
	if l == nil {
		return true
	}
	err := l.AcquireWithin(a.opts.Context, a.opts.Timeout)
	if err == nil {
		return true
	}
	if !errors.Is(err, admit.ErrOverloaded) {
		err = errors.New("timed out waiting to run the query")
	}
	writeError(ctx, &apiError{errorUnavailable, fmt.Errorf("%w; retry later", err)})
	ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, retryAfter)
	return false
}

// retryAfter is the Retry-After of a 503, in seconds.
const retryAfter = "1"

// release gives back the slot admit took, for a request that failed
// before its answer.
func (a *API) release() {
	if a.opts.Limiter != nil {
		a.opts.Limiter.Release()
	}
}

// respondSource answers 200 with src's success envelope, written in parts
// when it is long (package api/answer), under the slot admit took.
func (a *API) respondSource(ctx *fasthttp.RequestCtx, src answer.Source) {
	o := answer.Options{Context: a.opts.Context, Limiter: a.opts.Limiter, ContentType: contentTypeJSON,
		// Whole answers are left to the handler's compression, as before.
		Gzip: true, MinGzip: math.MaxInt, Cut: appendCutError}
	if err := answer.Write(ctx, src, o); err != nil { // unreachable: a result in memory does not fail
		writeError(ctx, &apiError{errorInternal, err})
	}
}

// appendCutError appends, on a line of its own, the error object that
// ends an answer cut short (the server closing while it is written).
func appendCutError(dst []byte, err error) []byte {
	return appendErrorJSON(append(dst, '\n'), &apiError{errorInternal, err})
}

// writeError answers with Prometheus's error JSON and the status of its
// class. Like Prometheus's respondError it carries no warnings, even when
// the failed query gathered some.
func writeError(ctx *fasthttp.RequestCtx, e *apiError) {
	ctx.Response.Reset()
	setCORS(ctx) // Reset dropped them; Prometheus sets them before any answer
	ctx.SetStatusCode(e.typ.status)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(appendErrorJSON(nil, e))
}

// noticeStrings splits annotations into warnings and infos, at most
// maxNotices of each and then a count of the omitted (AsStrings), in the
// annotations' map order, as Prometheus's respond does; a truncation
// notice is one of the annotations.
func noticeStrings(a annotations.Annotations, query string) (warnings, infos []string) {
	if len(a) == 0 {
		return nil, nil
	}
	return a.AsStrings(query, maxNotices, maxNotices)
}

func (a *API) getBuf() *[]byte {
	if bp, ok := a.bufs.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, 0, 4096)
	return &b
}

// putBuf pools bodies up to 1 MiB; a bigger one is left to the GC so one
// huge answer does not pin its memory.
func (a *API) putBuf(bp *[]byte) {
	if cap(*bp) <= 1<<20 {
		a.bufs.Put(bp)
	}
}

// msTime is t in Prometheus's milliseconds.
func msTime(t time.Time) int64 { return t.UnixMilli() }

// Handler binds h to a and answers a panic in it (a bug below, in the
// Queryable or the engine) with errorType "internal" and a log line with
// the stack, instead of letting it end the daemon: fasthttp does not
// recover handler panics.
func (a *API) Handler(h func(*API, *fasthttp.RequestCtx)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		defer func() {
			if r := recover(); r != nil {
				a.opts.Logger.Error("prometheus API handler panicked", "path", string(ctx.Path()),
					"panic", r, "stack", string(debug.Stack()))
				writeError(ctx, &apiError{errorInternal, fmt.Errorf("internal error: %v", r)})
			}
		}()
		h(a, ctx)
	}
}
