package api

import (
	"sync/atomic"
	"testing"
)

// TestReadingHook: Options.Reading hears of every request to a read route
// as it begins, whether or not the endpoint is wired, and of no write.
func TestReadingHook(t *testing.T) {
	var n atomic.Int64
	_, base := startServer(t, Options{Reading: func() { n.Add(1) }})
	steps := []struct {
		method, path, body string
		want               int64
	}{
		{"GET", "/api/version", "", 1},
		{"POST", "/api/put", `{"metric":"m","timestamp":1,"value":1,"tags":{"h":"a"}}`, 1},
		{"POST", "/api/query", `{"start":1,"queries":[{"metric":"m","aggregator":"sum"}]}`, 2},
		{"GET", "/api/v1/query_range?query=up&start=1&end=2&step=1", "", 3},
		{"POST", "/api/uid/assign", `{"metric":["m"]}`, 3},
	}
	for _, s := range steps {
		code, _, body := do(t, s.method, base+s.path, s.body)
		if got := n.Load(); got != s.want {
			t.Fatalf("after %s %s (%d %s): Reading called %d times, want %d", s.method, s.path, code, body, got, s.want)
		}
	}
}
