package promapi

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/changes"
)

// BenchmarkCachedRange times a range query answered from the answer
// cache, the handler called in process: what a dashboard's refresh costs
// tsd beyond the network. Its allocations are the hit path's.
func BenchmarkCachedRange(b *testing.B) {
	a := New(Options{Queryable: openDB(b), Logger: slog.New(slog.DiscardHandler),
		Cache: NewAnswerCache(CacheOptions{Changes: new(changes.Tracker), MinSteps: 10})})
	b.Cleanup(func() { a.Close() })
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(fmt.Sprintf("/api/v1/query_range?query=max(max_over_time(temp%%7Bhost=%%22h1%%22%%7D[1m]))+by+(__name__)&start=%d&end=%d&step=15",
		t0/1000, t0/1000+600))
	a.QueryRange(&ctx)
	a.QueryRange(&ctx)
	if s := a.cache.Stats(); s.Hits != 1 || ctx.Response.StatusCode() != fasthttp.StatusOK {
		b.Fatalf("no hit: %+v %d %s", s, ctx.Response.StatusCode(), ctx.Response.Body())
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		ctx.Request.URI().QueryArgs() // parsed once per request, as fasthttp's server does
		a.QueryRange(&ctx)
	}
}
