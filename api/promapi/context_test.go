package promapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/metrics"
	"strings"
	"testing"
)

// TestQueriesRunUnderOptionsContext: queries and look-ups run under
// Options.Context, so cancelling it (as api.Server does at shutdown)
// stops them.
func TestQueriesRunUnderOptionsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	base := serveOptions(t, Options{Queryable: openDB(t), Context: ctx, Logger: slog.New(slog.DiscardHandler)})
	for _, c := range []struct {
		path   string
		params url.Values
	}{
		{"/api/v1/query", vals("query", "up", "time", "1700000000")},
		{"/api/v1/query_range", vals("query", "up", "start", "1700000000", "end", "1700000060", "step", "15")},
		{"/api/v1/series", vals("match[]", "up")},
	} {
		code, body := call(t, http.MethodGet, base+c.path, c.params)
		if code == 200 || !strings.Contains(body, "canceled") {
			t.Errorf("%s under a cancelled Options.Context: %d %s", c.path, code, body)
		}
	}
}

// TestQueryStartsNoGoroutine: a query's context descends from
// Options.Context, not from the fasthttp.RequestCtx, whose derived
// contexts each start a goroutine to watch its Done channel. Sequential
// queries on one keep-alive connection then create (almost) no goroutines.
func TestQueryStartsNoGoroutine(t *testing.T) {
	base := serveAPI(t, openDB(t))
	url := base + "/api/v1/query_range?" + vals("query", "max(max_over_time(up[1m]))", "start", "1700000000", "end", "1700000600", "step", "60").Encode()
	get := func() {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	get() // dial, start the server's worker
	const n = 50
	before := goroutinesCreated()
	for range n {
		get()
	}
	if created := goroutinesCreated() - before; created >= n/2 {
		t.Errorf("%d sequential queries created %d goroutines", n, created)
	}
}

func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
