//go:build !race

// Not built under -race, as prom_routes_test.go: its promDB pulls
// Prometheus's tsdb into the race build.

package api

import (
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/internal/changes"
)

// shortcutRange is a range query of 61 steps over promDB's point: enough
// steps for the answer cache to keep it.
const shortcutRange = "/api/v1/query_range?query=up&start=1700000000&end=1700000060&step=1"

// rawAnswer is one GET's status, the headers an answer's bytes depend on,
// and its body as sent (compressed when asked).
type rawAnswer struct {
	code                    int
	ctype, encoding, vary   string
	allowOrigin, exposeHdrs string
	body                    string
}

func getRaw(t *testing.T, u string, hdr map[string]string) rawAnswer {
	t.Helper()
	code, h, body := getWith(t, u, hdr)
	return rawAnswer{code, h.Get("Content-Type"), h.Get("Content-Encoding"), h.Get("Vary"),
		h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Expose-Headers"), body}
}

// TestRangeShortcut: a range query asked again is answered by the
// shortcut before routing, with the bytes and headers the route gave the
// first time (compressed, CORS), counted in the route's metrics and heard
// by Options.Reading; an answer made stale by a write is not given.
func TestRangeShortcut(t *testing.T) {
	tr := new(changes.Tracker)
	cache := promapi.NewAnswerCache(promapi.CacheOptions{Changes: tr})
	var reads atomic.Int64
	s, base := startServer(t, Options{
		PromQL:  promapi.Options{Queryable: promDB(t), Cache: cache},
		Reading: func() { reads.Add(1) },
	})
	if s.shortcut == nil {
		t.Fatal("no shortcut with the answer cache and nothing before the route")
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Request.SetRequestURI(shortcutRange)
	if s.shortcut.serve(ctx) {
		t.Fatal("the shortcut answered a query never asked")
	}
	for _, hdr := range []map[string]string{nil, {"Accept-Encoding": "gzip", "Origin": "http://grafana.example"}} {
		first := getRaw(t, base+shortcutRange, hdr)
		again := getRaw(t, base+shortcutRange, hdr)
		if first.code != 200 || again != first {
			t.Fatalf("headers %q: asked again\n%+v\nfirst\n%+v", hdr, again, first)
		}
	}
	if got := reads.Load(); got != 4 {
		t.Errorf("Reading heard %d requests, want 4", got)
	}
	if st := cache.Stats(); st.Hits != 3 || st.Misses != 1 {
		t.Errorf("cache %+v, want the first request's miss and three hits", st)
	}

	ctx = new(fasthttp.RequestCtx)
	ctx.Request.SetRequestURI(shortcutRange)
	if !s.shortcut.serve(ctx) || ctx.Response.StatusCode() != 200 || len(ctx.Response.Body()) == 0 {
		t.Fatalf("the shortcut did not answer a kept query: %d %q", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	ctx = new(fasthttp.RequestCtx)
	ctx.Request.SetRequestURI(shortcutRange + "&")
	if s.shortcut.serve(ctx) {
		t.Error("the shortcut answered another query string")
	}
	ctx = new(fasthttp.RequestCtx)
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI(shortcutRange)
	if s.shortcut.serve(ctx) {
		t.Error("the shortcut answered a POST")
	}

	tr.Mark(1_700_000_000_000, 1_700_000_000_001)
	ctx = new(fasthttp.RequestCtx)
	ctx.Request.SetRequestURI(shortcutRange)
	if s.shortcut.serve(ctx) {
		t.Error("the shortcut gave an answer after a write in its span")
	}

	code, _, metrics := do(t, "GET", base+"/metrics", "")
	count := regexp.MustCompile(`tsd_http_request_duration_seconds_count\{code="200",route="/api/v1/query_range"\} (\d+)`).FindStringSubmatch(metrics)
	if code != 200 || count == nil || count[1] != "4" {
		t.Errorf("/metrics: %d, query_range's count %q, want 4", code, count)
	}
}

// TestRangeShortcutOff: with anything before the route that the shortcut
// would skip, there is none.
func TestRangeShortcutOff(t *testing.T) {
	prom := func() promapi.Options {
		return promapi.Options{Queryable: promDB(t), Cache: promapi.NewAnswerCache(promapi.CacheOptions{Changes: new(changes.Tracker)})}
	}
	for name, o := range map[string]Options{
		"no cache":       {PromQL: promapi.Options{Queryable: promDB(t)}},
		"no PromQL":      {},
		"write-only":     {PromQL: prom(), Mode: WriteOnly},
		"CORS domains":   {PromQL: prom(), CORSDomains: "*"},
		"access control": {PromQL: prom(), Auth: testAuthenticator(t)},
	} {
		s, _ := startServer(t, o)
		if s.shortcut != nil {
			t.Errorf("%s: a shortcut", name)
		}
	}
}
