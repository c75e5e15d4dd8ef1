package api

import (
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestJSONP checks ?jsonp=fn on OpenTSDB endpoints: answers and errors
// come back as fn(<json>) with their status and JSON content type, a
// callback that is not an identifier is refused, and non-OpenTSDB paths
// are not wrapped.
func TestJSONP(t *testing.T) {
	_, base := startServer(t, Options{Version: testVersion, JSONP: true})
	const notFound = `{"error":{"code":404,"message":"Endpoint not found"}}`
	for _, tc := range []struct {
		method, path string
		code         int
		want         string
	}{
		{"GET", "/api/version?jsonp=cb", 200, "cb(" + wantVersionJSON + ")"},
		{"GET", "/api/v1/version?jsonp=jQuery123_456.$x", 200, "jQuery123_456.$x(" + wantVersionJSON + ")"},
		{"GET", "/api/version?jsonp=", 200, wantVersionJSON},
		{"GET", "/api/nope?jsonp=cb", 404, "cb(" + notFound + ")"},
		{"PUT", "/api/version?jsonp=cb", 405, `cb({"error":{"code":405,"message":"Method not allowed",` +
			`"details":"The HTTP method [PUT] is not permitted for this endpoint"}})`},
		{"GET", "/api/version?jsonp=alert(1)", 400, `{"error":{"code":400,"message":"Invalid jsonp callback",` +
			`"details":"The jsonp parameter must be a JavaScript identifier, optionally dotted"}}`},
		{"GET", "/api/version?jsonp=1cb", 400, ""},
		{"GET", "/api/version?jsonp=a..b", 400, ""},
		{"GET", "/api/version?jsonp=cb.", 400, ""},
	} {
		code, ctype, body := do(t, tc.method, base+tc.path, "")
		if code != tc.code || ctype != contentTypeJSON || (tc.want != "" && body != tc.want) {
			t.Errorf("%s %s = %d %q %s\nwant %d %s", tc.method, tc.path, code, ctype, body, tc.code, tc.want)
		}
	}
}

// FuzzJSONPCallback: an accepted callback is never empty, never longer
// than maxCallback and holds only identifier characters and single dots.
func FuzzJSONPCallback(f *testing.F) {
	for _, s := range []string{"cb", "jQuery1_2.$x", "alert(1)", "a..b", ".a", "1a", "</script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/api/version?jsonp=" + url.QueryEscape(s))
		cb, ok := jsonpCallback(&ctx)
		if !ok || cb == nil {
			return
		}
		if len(cb) > maxCallback || strings.Contains(string(cb), "..") || strings.Trim(string(cb), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.") != "" {
			t.Fatalf("accepted %q", cb)
		}
	})
}
