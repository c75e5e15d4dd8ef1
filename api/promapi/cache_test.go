package promapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/internal/changes"
)

// cacheFixture is an API with an answer cache over a real Prometheus
// tsdb, and the tracker its writes are marked in.
type cacheFixture struct {
	t    *testing.T
	db   *tsdb.DB
	tr   *changes.Tracker
	a    *API
	base string
}

func newCacheFixture(t *testing.T, co CacheOptions) *cacheFixture {
	f := &cacheFixture{t: t, db: openDB(t), tr: new(changes.Tracker)}
	co.Changes = f.tr
	f.a = New(Options{Queryable: f.db, Logger: slog.New(slog.DiscardHandler), Cache: NewAnswerCache(co)})
	f.base = serve(t, f.a)
	return f
}

// rangeQuery asks query over openDB's ten minutes at a 15 s step (41
// steps) with the extra parameters kv, and returns the body.
func (f *cacheFixture) rangeQuery(query string, kv ...string) string {
	f.t.Helper()
	p := vals(append([]string{"query", query, "start", fmt.Sprint(t0 / 1000), "end", fmt.Sprint(t0/1000 + 600), "step", "15"}, kv...)...)
	code, body := call(f.t, http.MethodGet, f.base+"/api/v1/query_range", p)
	if code != 200 {
		f.t.Fatalf("%s: %d %s", query, code, body)
	}
	return body
}

// add appends one sample of a new series, unmarked.
func (f *cacheFixture) add(ls labels.Labels, ts int64, v float64) {
	f.t.Helper()
	app := f.db.Appender(context.Background())
	if _, err := app.Append(0, ls, ts, v); err != nil {
		f.t.Fatal(err)
	}
	if err := app.Commit(); err != nil {
		f.t.Fatal(err)
	}
}

// wantHits checks the cache's hit and miss counts.
func (f *cacheFixture) wantHits(hits, misses int64) {
	f.t.Helper()
	if s := f.a.cache.Stats(); s.Hits != hits || s.Misses != misses {
		f.t.Fatalf("cache hits %d misses %d, want %d and %d", s.Hits, s.Misses, hits, misses)
	}
}

// TestAnswerCacheUntilMarked: an answer is given again, byte for byte,
// until a change is marked in the span its selectors read (the range,
// less the lookback delta or the range function's window); a change
// marked outside the span keeps it.
func TestAnswerCacheUntilMarked(t *testing.T) {
	f := newCacheFixture(t, CacheOptions{MinSteps: 10})
	first := f.rangeQuery(`temp`)
	if again := f.rangeQuery(`temp`); again != first {
		t.Fatalf("a kept answer differs:\n%s\n%s", again, first)
	}
	f.wantHits(1, 1)

	// Unmarked, a new series is not seen: the kept answer is what is
	// given, which is why every write path marks.
	f.add(labels.FromStrings("__name__", "temp", "host", "h2"), t0+300_000, 7)
	if got := f.rangeQuery(`temp`); got != first {
		t.Fatalf("an unmarked change reached the answer: %s", got)
	}
	f.tr.Mark(t0+300_000, t0+300_000)
	if got := f.rangeQuery(`temp`); !strings.Contains(got, `"h2"`) {
		t.Fatalf("a marked change is not in the answer: %s", got)
	}
	f.wantHits(2, 2)

	f.tr.Mark(t0+10*3600_000, t0+10*3600_000) // hours after the range
	f.rangeQuery(`temp`)
	f.wantHits(3, 2)
	f.tr.Mark(t0-240_000, t0-240_000) // within the lookback before the start
	f.rangeQuery(`temp`)
	f.wantHits(3, 3)

	// A range function reads its window before the start.
	f.rangeQuery(`max_over_time(temp[2h])`)
	f.rangeQuery(`max_over_time(temp[2h])`)
	f.wantHits(4, 4)
	f.tr.Mark(t0-90*60_000, t0-90*60_000)
	f.rangeQuery(`max_over_time(temp[2h])`)
	f.wantHits(4, 5)

	f.tr.MarkAll()
	f.rangeQuery(`max_over_time(temp[2h])`)
	f.wantHits(4, 6)
}

// TestAnswerCacheKeys: every parameter that shapes an answer is in its
// key, and what the cache must not keep it does not.
func TestAnswerCacheKeys(t *testing.T) {
	f := newCacheFixture(t, CacheOptions{MinSteps: 10})
	a := f.rangeQuery(`up`)
	if b := f.rangeQuery(`up`, "limit", "1"); b == a {
		t.Fatal("limit gave the kept answer without it")
	}
	f.rangeQuery(`up`, "lookback_delta", "1s")
	f.wantHits(0, 3) // three keys
	if again := f.rangeQuery(`up`, "timeout", "1m"); again != a {
		t.Fatal("timeout changed a kept answer")
	}
	f.wantHits(1, 3)
	f.rangeQuery(`up`, "stats", "all")
	f.rangeQuery(`up`, "stats", "all")
	f.wantHits(1, 3) // statistics describe one run: never kept

	// Fewer steps than CacheMinSteps: not kept.
	p := vals("query", "up", "start", fmt.Sprint(t0/1000), "end", fmt.Sprint(t0/1000+60), "step", "15")
	for range 2 {
		if code, body := call(t, http.MethodGet, f.base+"/api/v1/query_range", p); code != 200 {
			t.Fatal(code, body)
		}
	}
	f.wantHits(1, 3)
	// Instant queries are not kept.
	for range 2 {
		call(t, http.MethodGet, f.base+"/api/v1/query", vals("query", "up", "time", fmt.Sprint(t0/1000+600)))
	}
	f.wantHits(1, 3)
}

// TestAnswerCacheHorizon: an answer that read points a retention rule
// may hide by now is neither kept nor given.
func TestAnswerCacheHorizon(t *testing.T) {
	horizon := int64(t0 - 3600_000)
	f := newCacheFixture(t, CacheOptions{MinSteps: 10, Horizon: func(time.Time) int64 { return horizon }})
	f.rangeQuery(`temp`)
	f.rangeQuery(`temp`)
	f.wantHits(1, 1)
	horizon = t0 // the clock moved: the range's first lookback is past it
	f.rangeQuery(`temp`)
	f.rangeQuery(`temp`)
	f.wantHits(1, 3)
}

// TestAnswerCacheBounded: the cache holds at most CacheBytes, the oldest
// answers going first.
func TestAnswerCacheBounded(t *testing.T) {
	f := newCacheFixture(t, CacheOptions{MinSteps: 10, Bytes: 4 << 10})
	for i := range 50 {
		f.rangeQuery(fmt.Sprintf(`temp + %d`, i))
		if s := f.a.cache.Stats(); s.Bytes > 4<<10 {
			t.Fatalf("after %d answers the cache holds %d bytes, over its 4 KiB", i+1, s.Bytes)
		}
	}
	if s := f.a.cache.Stats(); s.Entries == 0 || s.Entries >= 50 {
		t.Fatalf("%d answers kept of 50, want some and not all", s.Entries)
	}
	f.rangeQuery(`temp + 49`) // the newest is kept
	f.rangeQuery(`temp + 0`)  // the oldest is gone
	if s := f.a.cache.Stats(); s.Hits != 1 {
		t.Fatalf("hits %d, want the newest answer's only", s.Hits)
	}
	small := newCacheFixture(t, CacheOptions{MinSteps: 10, Bytes: 100})
	small.rangeQuery(`temp`)
	small.rangeQuery(`temp`)
	if s := small.a.cache.Stats(); s.Entries != 0 || s.Hits != 0 {
		t.Fatalf("an answer larger than the cache was kept: %+v", s)
	}

	// A POST's answer given to a GET grows by the GET's query string: a
	// cache it fills exactly lets it go.
	full := newCacheFixture(t, CacheOptions{MinSteps: 10})
	p := vals("query", "temp", "start", fmt.Sprint(t0/1000), "end", fmt.Sprint(t0/1000+600), "step", "15")
	if code, body := call(t, http.MethodPost, full.base+"/api/v1/query_range", p); code != 200 {
		t.Fatal(code, body)
	}
	full.a.cache.mu.Lock()
	full.a.cache.maxBytes = full.a.cache.bytes
	full.a.cache.mu.Unlock()
	full.rangeQuery(`temp`)
	if s := full.a.cache.Stats(); s.Hits != 1 || s.Bytes > full.a.cache.maxBytes {
		t.Fatalf("%+v over %d bytes", s, full.a.cache.maxBytes)
	}
}

// TestAnswerCachedByQueryString: AnswerCached gives the answer a GET with
// the same raw query string was given, byte for byte, while it holds;
// nothing for another query string, a POST's form, a stale answer or one
// the cache let go.
func TestAnswerCachedByQueryString(t *testing.T) {
	f := newCacheFixture(t, CacheOptions{MinSteps: 10, Bytes: 4 << 10})
	p := vals("query", "temp", "start", fmt.Sprint(t0/1000), "end", fmt.Sprint(t0/1000+600), "step", "15")
	cached := func(method, query string) (string, bool) {
		t.Helper()
		ctx := new(fasthttp.RequestCtx)
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI("/api/v1/query_range?" + query)
		hit := f.a.AnswerCached(ctx)
		if !hit && (len(ctx.Response.Body()) > 0 || len(ctx.Response.Header.Peek("Vary")) > 0) {
			t.Fatalf("a miss wrote an answer: %q", ctx.Response.Body())
		}
		return string(ctx.Response.Body()), hit
	}
	if _, hit := cached("GET", p.Encode()); hit {
		t.Fatal("an answer before any query")
	}
	if code, body := call(t, http.MethodPost, f.base+"/api/v1/query_range", p); code != 200 {
		t.Fatal(code, body)
	}
	if _, hit := cached("GET", p.Encode()); hit {
		t.Fatal("a POST's answer is found by a query string")
	}
	// A GET of the same parameters is given the POST's answer by its key,
	// and the answer is found by the GET's query string from then on.
	first := f.rangeQuery("temp")
	if got, hit := cached("GET", p.Encode()); !hit || got != first {
		t.Fatalf("hit %v: %s\nwant %s", hit, got, first)
	}
	if _, hit := cached("POST", p.Encode()); hit {
		t.Fatal("a POST is answered by its query string")
	}
	if _, hit := cached("GET", p.Encode()+"&limit=0"); hit {
		t.Fatal("another query string is answered")
	}
	f.wantHits(2, 1) // the GET found the POST's answer by its key, then AnswerCached

	f.tr.Mark(t0+300_000, t0+300_000)
	if _, hit := cached("GET", p.Encode()); hit {
		t.Fatal("a stale answer is given")
	}
	f.rangeQuery("temp")
	for i := range 50 { // the cache lets the answer go
		f.rangeQuery(fmt.Sprintf(`temp + %d`, i))
	}
	if _, hit := cached("GET", p.Encode()); hit {
		t.Fatal("an answer the cache let go is given")
	}
	if s := f.a.cache.Stats(); len(f.a.cache.byQuery) > s.Entries {
		t.Fatalf("%d query strings for %d answers", len(f.a.cache.byQuery), s.Entries)
	}
}

// TestAnswerCacheConcurrent: puts, gets by key and by query string, and
// marks from several goroutines keep the cache's books: its bytes are
// its entries' sizes, within its bound, and every query string finds the
// entry that holds it.
func TestAnswerCacheConcurrent(t *testing.T) {
	tr := new(changes.Tracker)
	c := NewAnswerCache(CacheOptions{Changes: tr, Bytes: 8 << 10})
	body := []byte(strings.Repeat("x", 300))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint(i % 37)
				q := []byte("q=" + k)
				switch (i + w) % 4 {
				case 0:
					c.put(k, string(q), tr.Gen(), 0, 1000, body)
				case 1:
					c.get([]byte(k), q)
				case 2:
					c.getByQuery(q)
				default:
					if i%50 == 0 {
						tr.Mark(0, 0)
					}
					c.put(k, "", tr.Gen(), 0, 1000, body) // a POST's answer
				}
			}
		})
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	var bytes int64
	n := 0
	for e := c.head.next; e != &c.head; e = e.next {
		bytes += e.size()
		n++
		if e.query != "" && c.byQuery[e.query] != e {
			t.Fatalf("entry %q: its query string %q finds another", e.key, e.query)
		}
	}
	if n != len(c.m) || bytes != c.bytes || c.bytes > c.maxBytes {
		t.Fatalf("%d entries in the list, %d in the map; %d bytes counted, %d summed, bound %d", n, len(c.m), c.bytes, bytes, c.maxBytes)
	}
	for q, e := range c.byQuery {
		if c.m[e.key] != e || e.query != q {
			t.Fatalf("query string %q finds an entry the cache does not hold", q)
		}
	}
}

// TestAnswerCacheKeepsGzip: a kept answer of a packet or more goes
// gzipped to a client that takes gzip, from a gzipped body made at the
// first such hit and kept with the answer (counted in the cache's bytes);
// a client without gzip gets the body, and a short answer goes plain.
func TestAnswerCacheKeepsGzip(t *testing.T) {
	f := newCacheFixture(t, CacheOptions{MinSteps: 10})
	p := vals("query", "temp", "start", fmt.Sprint(t0/1000), "end", fmt.Sprint(t0/1000+600), "step", "1")
	code, first := call(t, http.MethodGet, f.base+"/api/v1/query_range", p)
	if code != 200 || len(first) < answer.MinGzip {
		t.Fatalf("%d, %d bytes: want an answer of at least %d", code, len(first), answer.MinGzip)
	}
	hit := func(gzip bool) *fasthttp.Response {
		t.Helper()
		ctx := new(fasthttp.RequestCtx)
		ctx.Request.SetRequestURI("/api/v1/query_range?" + p.Encode())
		if gzip {
			ctx.Request.Header.Set("Accept-Encoding", "gzip, deflate")
		}
		if !f.a.AnswerCached(ctx) {
			t.Fatal("not given from the cache")
		}
		return &ctx.Response
	}
	before := f.a.cache.Stats().Bytes
	if r := hit(false); string(r.Body()) != first || len(r.Header.ContentEncoding()) > 0 {
		t.Fatalf("without gzip: Content-Encoding %q, body %.80s", r.Header.ContentEncoding(), r.Body())
	}
	r := hit(true)
	gz := append([]byte(nil), r.Body()...)
	if string(r.Header.ContentEncoding()) != "gzip" || !strings.Contains(string(r.Header.Peek("Vary")), "Accept-Encoding") {
		t.Fatalf("Content-Encoding %q, Vary %q", r.Header.ContentEncoding(), r.Header.Peek("Vary"))
	}
	if body, err := r.BodyGunzip(); err != nil || string(body) != first {
		t.Fatalf("inflated %.80s, err %v; want the kept answer", body, err)
	}
	e := f.a.cache.m[string(f.a.cache.byQuery[p.Encode()].key)]
	if string(e.gz) != string(gz) {
		t.Fatal("the gzipped body given is not kept with the answer")
	}
	if got := f.a.cache.Stats().Bytes; got != before+int64(len(gz)) {
		t.Fatalf("cache bytes %d, want %d + the gzipped body's %d", got, before, len(gz))
	}
	if r := hit(true); string(r.Body()) != string(gz) {
		t.Fatal("a second hit made another gzipped body")
	}

	small := vals("query", "temp", "start", fmt.Sprint(t0/1000), "end", fmt.Sprint(t0/1000+600), "step", "15")
	call(t, http.MethodGet, f.base+"/api/v1/query_range", small)
	ctx := new(fasthttp.RequestCtx)
	ctx.Request.SetRequestURI("/api/v1/query_range?" + small.Encode())
	ctx.Request.Header.Set("Accept-Encoding", "gzip")
	if !f.a.AnswerCached(ctx) || len(ctx.Response.Header.ContentEncoding()) > 0 || len(ctx.Response.Body()) >= answer.MinGzip {
		t.Fatalf("short answer: Content-Encoding %q, %d bytes", ctx.Response.Header.ContentEncoding(), len(ctx.Response.Body()))
	}
}
