package promapi

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/internal/changes"
)

// AnswerCache keeps the whole answers of range queries, so that a query
// asked again (a dashboard refreshed, a second viewer, the same panel on
// two boards) is answered without running the engine. An answer is kept
// with the generation of internal/changes taken before its query ran and
// the time span its selectors read (promql.FindMinMaxTime); it is given
// while no write, delete or other change has been marked in that span
// since, and while retention cannot have hidden any of its points.
// Entries are whole answers of at most answer.ChunkSize bytes, in one
// LRU list under one lock: a hit holds it for a map look-up and two
// pointer moves. An answer to a GET without a body is also found by the
// request's raw query string, which alone decides its parameters, so that
// the server can give it before routing and parsing the request
// (API.AnswerCached).
type AnswerCache struct {
	changes  *changes.Tracker
	horizon  func(time.Time) int64
	minSteps int64
	maxBytes int64

	mu      sync.Mutex
	m       map[string]*cachedAnswer
	byQuery map[string]*cachedAnswer // by raw query string (cachedAnswer.query)
	head    cachedAnswer             // LRU ring sentinel: head.next is the newest
	bytes   int64

	hits, misses atomic.Int64
}

type cachedAnswer struct {
	key        string
	query      string // the raw query string of a GET that made it, "" if none
	gen        uint64
	mint, maxt int64
	body       []byte
	// gz is body gzipped, made at its first hit by a client that takes
	// gzip (answer.WantsGzip) and kept from then on: a dashboard's
	// viewers, Grafana's client asking for gzip, then cost no compression
	// each. Read and set under the cache's lock.
	gz         []byte
	prev, next *cachedAnswer
}

// answerOverhead is an entry's memory beyond its key and body: the
// struct, its map slot and links.
const answerOverhead = 160

// CacheOptions configure an AnswerCache.
type CacheOptions struct {
	// Changes is marked by every change to the points queries read
	// (internal/changes). It must see every change to the store: a
	// daemon that shares its store with another writer must not keep
	// answers. Required.
	Changes *changes.Tracker
	// Bytes bounds the memory of kept answers (keys and bodies). Default
	// DefaultCacheBytes.
	Bytes int64
	// MinSteps is the fewest steps per series a range query must have for
	// its answer to be kept. Default DefaultCacheMinSteps.
	MinSteps int
	// Horizon returns, at a time, the first millisecond no retention rule
	// can hide any more (now less the shortest retention): an answer that
	// read points before it is neither kept nor given. Default nil:
	// nothing expires.
	Horizon func(now time.Time) int64
}

// Defaults of CacheOptions.
const (
	DefaultCacheBytes = 64 << 20
	// DefaultCacheMinSteps is VictoriaMetrics' threshold for keeping a
	// range query's result.
	DefaultCacheMinSteps = 50
)

// NewAnswerCache returns an empty cache; Options.Cache hands it to an
// API.
func NewAnswerCache(o CacheOptions) *AnswerCache {
	if o.Bytes <= 0 {
		o.Bytes = DefaultCacheBytes
	}
	if o.MinSteps <= 0 {
		o.MinSteps = DefaultCacheMinSteps
	}
	c := &AnswerCache{changes: o.Changes, horizon: o.Horizon, minSteps: int64(o.MinSteps),
		maxBytes: o.Bytes, m: map[string]*cachedAnswer{}, byQuery: map[string]*cachedAnswer{}}
	c.head.prev, c.head.next = &c.head, &c.head
	return c
}

// appendRangeKey appends a range query's cache key to dst, or returns
// nil when its answer is not kept: fewer steps than CacheMinSteps
// (VictoriaMetrics' rule: a short range is an ad-hoc look rather than a
// panel that is drawn again), or a request for statistics, which describe
// one run. Every parameter that shapes a successful answer is in the key;
// timeout does not.
func (c *AnswerCache) appendRangeKey(dst []byte, f form, r rangeParams, limit int, opts promql.QueryOpts) []byte {
	if c == nil || len(f.peek("stats")) > 0 {
		return nil
	}
	step := r.step.Milliseconds()
	if step <= 0 || (msTime(r.end)-msTime(r.start))/step+1 < c.minSteps {
		return nil
	}
	for _, n := range [...]int64{msTime(r.start), msTime(r.end), step, int64(opts.LookbackDelta()), int64(limit)} {
		dst = strconv.AppendInt(dst, n, 36)
		dst = append(dst, ' ')
	}
	return append(dst, f.peek("query")...)
}

// get returns the answer kept under key when it still holds, nil if not.
// A kept answer without a query string to be found by takes query, when
// not nil and not another answer's; should the answer be stale, give
// drops it with its query string.
func (c *AnswerCache) get(key, query []byte) kept {
	c.mu.Lock()
	e := c.m[string(key)]
	if e != nil && e.query == "" && query != nil && c.byQuery[string(query)] == nil {
		e.query = string(query)
		c.byQuery[e.query] = e
		c.bytes += int64(len(e.query))
	}
	k := c.give(e)
	if k.e == nil {
		c.misses.Add(1)
	}
	return k
}

// getByQuery returns the answer a GET with the raw query string q was
// given, when it still holds. A miss is not counted: the request goes on
// to get.
func (c *AnswerCache) getByQuery(q []byte) kept {
	c.mu.Lock()
	return c.give(c.byQuery[string(q)])
}

// kept is a kept answer as given: its entry (nil: none; its body never
// changes once kept) and its gzipped body as it was then (nil: not made
// yet), which is set under the lock.
type kept struct {
	e  *cachedAnswer
	gz []byte
}

// give returns e's answer and makes it the newest, or drops it when
// stale and returns none; it unlocks mu, which the caller holds.
func (c *AnswerCache) give(e *cachedAnswer) kept {
	if e != nil && c.stale(e) {
		c.remove(e)
		e = nil
	}
	if e == nil {
		c.mu.Unlock()
		return kept{}
	}
	c.unlink(e)
	c.pushFront(e)
	c.evict() // get may have grown e by its query string
	k := kept{e: e, gz: e.gz}
	c.mu.Unlock()
	c.hits.Add(1)
	return k
}

// keepGzip keeps gz, k's body gzipped, with its entry while the entry is
// still kept and has none.
func (c *AnswerCache) keepGzip(k kept, gz []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[k.e.key] != k.e || k.e.gz != nil {
		return
	}
	k.e.gz = gz
	c.bytes += int64(len(gz))
	c.evict()
}

// stale reports whether e may differ from a fresh answer now.
func (c *AnswerCache) stale(e *cachedAnswer) bool {
	return c.changes.Changed(e.gen, e.mint, e.maxt) || (c.horizon != nil && e.mint < c.horizon(time.Now()))
}

// put keeps a copy of body, the whole answer of the query under key whose
// run started at generation gen and read [mint, maxt]; query, when not
// empty, is the raw query string it is also found by.
func (c *AnswerCache) put(key, query string, gen uint64, mint, maxt int64, body []byte) {
	e := &cachedAnswer{key: key, query: query, gen: gen, mint: mint, maxt: maxt}
	size := e.size() + int64(len(body))
	if size > c.maxBytes || c.stale(e) {
		return
	}
	e.body = append([]byte(nil), body...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[key]; old != nil {
		c.remove(old)
	}
	if old := c.byQuery[query]; query != "" && old != nil {
		c.remove(old) // unreachable while a query string decides its key
	}
	c.m[key] = e
	if query != "" {
		c.byQuery[query] = e
	}
	c.pushFront(e)
	c.bytes += size
	c.evict()
}

// evict drops the least recently given answers while the cache holds
// more than maxBytes; the caller holds mu.
func (c *AnswerCache) evict() {
	for c.bytes > c.maxBytes {
		c.remove(c.head.prev)
	}
}

func (e *cachedAnswer) size() int64 {
	return int64(len(e.key)+len(e.query)+len(e.body)+len(e.gz)) + answerOverhead
}

// remove drops e; the caller holds mu.
func (c *AnswerCache) remove(e *cachedAnswer) {
	c.unlink(e)
	delete(c.m, e.key)
	if e.query != "" {
		delete(c.byQuery, e.query)
	}
	c.bytes -= e.size()
}

func (c *AnswerCache) unlink(e *cachedAnswer) { e.prev.next, e.next.prev = e.next, e.prev }

func (c *AnswerCache) pushFront(e *cachedAnswer) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
}

// CacheStats are the answer cache's counters since the start.
type CacheStats struct {
	Hits, Misses int64
	Entries      int
	Bytes        int64
}

// Stats returns the cache's counters.
func (c *AnswerCache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Entries: len(c.m), Bytes: c.bytes}
}

// cacheRun is a range query's place in the cache: the key it is kept
// under, the raw query string it is also found by, the generation taken
// before it ran and the span it reads.
type cacheRun struct {
	c          *AnswerCache
	key, query string
	gen        uint64
	mint, maxt int64
}

// respondCached answers from the cache and reports true on a hit; on a
// miss it returns the run to record the answer under (none for an empty
// key).
func (a *API) respondCached(ctx *fasthttp.RequestCtx, key []byte) (cacheRun, bool) {
	if key == nil {
		return cacheRun{}, false
	}
	q := rawQuery(ctx)
	if k := a.cache.get(key, q); k.e != nil {
		a.cache.write(ctx, k)
		return cacheRun{}, true
	}
	return cacheRun{c: a.cache, key: string(key), query: string(q), gen: a.cache.changes.Gen()}, false
}

// AnswerCached answers a GET of /api/v1/query_range from the answer cache
// by its raw query string alone, before the request is parsed, and
// reports whether it did; the caller has checked the path and that
// nothing else (access control, a route prefix) stands before the route.
// The answer is the route's own up to compression, which the caller
// applies as the route does.
func (a *API) AnswerCached(ctx *fasthttp.RequestCtx) bool {
	q := rawQuery(ctx)
	if a.cache == nil || q == nil {
		return false
	}
	k := a.cache.getByQuery(q)
	if k.e == nil {
		return false
	}
	setCORS(ctx) // as allowed does
	a.cache.write(ctx, k)
	return true
}

// rawQuery returns the query string of a GET without a body: the whole
// of what decides a range query's parameters (form reads a body's form
// first); nil for any other request or an empty one. A request's
// Content-Length is -2 when it has neither that header nor
// Transfer-Encoding, so no body.
func rawQuery(ctx *fasthttp.RequestCtx) []byte {
	if n := ctx.Request.Header.ContentLength(); !ctx.IsGet() || (n != 0 && n != -2) {
		return nil
	}
	if q := ctx.URI().QueryString(); len(q) > 0 {
		return q
	}
	return nil
}

// write answers with a kept answer as answer.Write does with a whole
// one, gzipped as the route's compression would (from answer.MinGzip,
// for a client that takes gzip): from the gzipped body kept with it, made
// and kept at its first such hit.
func (c *AnswerCache) write(ctx *fasthttp.RequestCtx, k kept) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	if !answer.WantsGzip(ctx, len(k.e.body)) {
		ctx.SetBody(k.e.body)
		return
	}
	if k.gz == nil {
		k.gz = answer.AppendGzip(nil, k.e.body)
		c.keepGzip(k, k.gz)
	}
	ctx.SetBody(k.gz)
	answer.MarkGzip(&ctx.Response.Header)
}

// span records what stmt's selectors read. It must see the statement as
// parsed: query/promql.WithPushdown turns range functions' matrix
// selectors into marked instant ones, which read further back than
// FindMinMaxTime would then say.
func (run *cacheRun) span(stmt parser.Statement) {
	es, ok := stmt.(*parser.EvalStmt)
	if !ok {
		run.c = nil
		return
	}
	run.mint, run.maxt = promql.FindMinMaxTime(es)
}

// recording wraps src so that a whole answer (one part) is kept; src as
// it is without a run.
func (run cacheRun) recording(src *resultSource) answer.Source {
	if run.c == nil {
		return src
	}
	return &recordingSource{resultSource: src, run: run}
}

type recordingSource struct {
	*resultSource
	run   cacheRun
	later bool // a part was made: the answer is not whole
}

// Next implements answer.Source.
func (r *recordingSource) Next(ctx context.Context, dst []byte, max int) ([]byte, bool, error) {
	start := len(dst)
	part, done, err := r.resultSource.Next(ctx, dst, max)
	if done && err == nil && !r.later {
		r.run.c.put(r.run.key, r.run.query, r.run.gen, r.run.mint, r.run.maxt, part[start:])
	}
	r.later = true
	return part, done, err
}
