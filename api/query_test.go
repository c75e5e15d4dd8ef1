package api

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/storage"
)

// TestQueryErrorStatus checks the status and body each class of query
// error gets.
func TestQueryErrorStatus(t *testing.T) {
	for _, c := range []struct {
		err   error
		code  int
		body  string
		retry bool
	}{
		{&tsquery.Error{Msg: "No such name for 'metrics': 'x'", Details: "d"}, 400,
			`{"error":{"code":400,"message":"No such name for 'metrics': 'x'","details":"d"}}`, false},
		{fmt.Errorf("read: %w", &read.LimitError{Limit: "series", Max: 2}), 413,
			`{"error":{"code":413,"message":"Sorry, you have attempted to fetch more than our limit of 2 series. Please try filtering using more tags or decrease your time range."}}`, false},
		{&opentsdb.TimeoutError{Timeout: 1500 * time.Millisecond}, 408,
			`{"error":{"code":408,"message":"Query timeout exceeded: the query ran longer than 1500 ms (tsd.query.timeout)"}}`, false},
		{fmt.Errorf("scan: %w", storage.ErrRetryable), 503,
			`{"error":{"code":503,"message":"Storage unavailable, retry later","details":"scan: storage: retryable"}}`, true},
		{errors.New("disk on fire"), 500, `{"error":{"code":500,"message":"Query failed","details":"disk on fire"}}`, false},
	} {
		var ctx fasthttp.RequestCtx
		writeQueryError(&ctx, c.err)
		got := string(ctx.Response.Body())
		if ctx.Response.StatusCode() != c.code || got != c.body || (string(ctx.Response.Header.Peek("Retry-After")) != "") != c.retry {
			t.Errorf("%v: %d %s, want %d %s (Retry-After %v)", c.err, ctx.Response.StatusCode(), got, c.code, c.body, c.retry)
		}
	}
}

func TestQuerySubroute(t *testing.T) {
	for path, want := range map[string]string{
		"/api/query": "", "/api/query/": "", "/api/query/last": "last", "/API/V1/Query/EXP": "exp",
		"/api/query/gexp/x": "gexp", "/api/v1/query": "",
	} {
		if got := querySubroute([]byte(path)); got != want {
			t.Errorf("querySubroute(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestQueryDeleteVerbDisabled checks OpenTSDB's QueryRpc.execute: with
// tsd.http.query.allow_delete off, the DELETE verb on /api/query and its
// sub-endpoints is refused before the query is read, as 400 "Bad request"
// whose details name the setting.
func TestQueryDeleteVerbDisabled(t *testing.T) {
	st := newReadStack(t)
	eng, err := opentsdb.New(&opentsdb.Options{Reader: st.r, UIDs: st.u, Index: st.ix, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	_, base := startServer(t, Options{Query: eng})
	want := `{"error":{"code":400,"message":"Bad request","details":"Deleting data is not enabled (tsd.http.query.allow_delete=false)"}}`
	for _, path := range []string{
		"/api/query?start=1h-ago&m=sum:sys.cpu",
		"/api/query?m=sum:sys.cpu", // refused before the missing start is noticed
		"/api/query/last?timeseries=sys.cpu",
	} {
		if code, _, body := do(t, "DELETE", base+path, ""); code != 400 || body != want {
			t.Errorf("DELETE %s: %d %s\nwant 400 %s", path, code, body, want)
		}
	}
}
