package api

import (
	"strings"
	"testing"
)

// TestStateChangingGET: by default every request that changes state is
// refused over GET, method_override included, with 405 naming
// tsd.http.allow_state_changing_get, while the same request by POST or
// DELETE is served; with the option on, the GET is served as in
// OpenTSDB.
func TestStateChangingGET(t *testing.T) {
	m := newMetaStack(t, Options{Annotations: noteStore(t)})
	refused := []string{
		"/api/uid/assign?metric=sys.new",
		"/api/uid/rename?metric=sys.mem&name=sys.memory",
		"/api/uid/uidmeta?uid=000001&type=metric&display_name=x&method_override=post",
		"/api/dropcaches",
		"/api/annotation?start_time=1356998400&description=x&method_override=post",
		"/api/annotation?start_time=1356998400&method_override=delete",
	}
	for _, p := range refused {
		code, out := m.call(t, "GET", p, "", nil)
		if code != 405 || !strings.Contains(out, `"code":405`) || !strings.Contains(out, "tsd.http.allow_state_changing_get") {
			t.Errorf("GET %s = %d %s, want 405 naming the key", p, code, out)
		}
	}
	if code, out := m.call(t, "GET", "/api/uid/assign?metric=sys.new", "", nil); code != 405 {
		t.Fatalf("GET assign = %d %s", code, out)
	}
	if code, out := m.call(t, "GET", "/api/suggest?type=metrics&q=sys.new", "", nil); code != 200 || out != "[]" {
		t.Errorf("a refused GET assigned a UID: suggest = %d %s", code, out)
	}
	if code, out := m.call(t, "POST", "/api/uid/assign", `{"metric":["sys.new"]}`, nil); code != 200 {
		t.Errorf("POST assign = %d %s", code, out)
	}
	if code, out := m.call(t, "DELETE", "/api/dropcaches", "", nil); code != 200 {
		t.Errorf("DELETE dropcaches = %d %s", code, out)
	}
	if code, out := m.call(t, "GET", "/api/suggest?type=metrics&q=sys", "", nil); code != 200 {
		t.Errorf("a read GET = %d %s", code, out)
	}

	open := newMetaStack(t, Options{AllowStateChangingGET: true})
	if code, out := open.call(t, "GET", "/api/uid/assign?metric=sys.new", "", nil); code != 200 {
		t.Errorf("GET assign with allow_state_changing_get = %d %s", code, out)
	}
	if code, out := open.call(t, "GET", "/api/dropcaches", "", nil); code != 200 {
		t.Errorf("GET dropcaches with allow_state_changing_get = %d %s", code, out)
	}
}

// TestJSONPOff: ?jsonp is refused with 400 naming tsd.http.jsonp.enable
// unless JSONP is on, when it wraps the answer.
func TestJSONPOff(t *testing.T) {
	_, base := startServer(t, Options{})
	code, _, body := do(t, "GET", base+"/api/version?jsonp=cb", "")
	if code != 400 || !strings.Contains(body, "tsd.http.jsonp.enable") || strings.HasPrefix(body, "cb(") {
		t.Errorf("jsonp off: %d %s, want 400 naming the key", code, body)
	}
	_, base = startServer(t, Options{JSONP: true})
	if code, _, body := do(t, "GET", base+"/api/version?jsonp=cb", ""); code != 200 || !strings.HasPrefix(body, "cb({") {
		t.Errorf("jsonp on: %d %s", code, body)
	}
}

// TestCORS follows OpenTSDB's RpcHandler: without cors_domains OPTIONS
// is 405 and no Access-Control header is sent; with them a listed origin
// gets the headers (a preflight 200 without a body), on errors too, and
// another origin gets 200 with an error body and no Allow-Origin.
func TestCORS(t *testing.T) {
	_, base := startServer(t, Options{})
	resp, body := sendReq(t, "OPTIONS", base+"/api/query", nil, "Origin", "https://grafana.example")
	if resp.StatusCode != 405 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("OPTIONS without CORS = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, _ = sendReq(t, "GET", base+"/api/version", nil, "Origin", "https://grafana.example")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET without CORS: %d, Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}

	_, base = startServer(t, Options{CORSDomains: "https://grafana.example, https://b.example", CORSHeaders: "Content-Type, X-Custom"})
	resp, body = sendReq(t, "OPTIONS", base+"/api/query", nil, "Origin", "https://GRAFANA.example",
		"Access-Control-Request-Method", "POST")
	if resp.StatusCode != 200 || body != "" || resp.Header.Get("Access-Control-Allow-Origin") != "https://GRAFANA.example" ||
		resp.Header.Get("Access-Control-Allow-Methods") != "GET, POST, PUT, DELETE" ||
		resp.Header.Get("Access-Control-Allow-Headers") != "Content-Type, X-Custom" {
		t.Errorf("preflight = %d %v %q", resp.StatusCode, resp.Header, body)
	}
	resp, body = sendReq(t, "GET", base+"/api/version", nil, "Origin", "https://b.example")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://b.example" || !strings.Contains(body, `"version"`) {
		t.Errorf("GET from a listed origin = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = sendReq(t, "GET", base+"/api/nope", nil, "Origin", "https://b.example")
	if resp.StatusCode != 404 || resp.Header.Get("Access-Control-Allow-Origin") != "https://b.example" {
		t.Errorf("error from a listed origin = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = sendReq(t, "GET", base+"/api/version", nil, "Origin", "https://evil.example")
	want := `{"error":{"code":200,"message":"CORS domain not allowed","details":"The domain [https://evil.example] is not permitted access"}}`
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" || body != want {
		t.Errorf("GET from another origin = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = sendReq(t, "OPTIONS", base+"/api/query", nil)
	if resp.StatusCode != 405 {
		t.Errorf("OPTIONS without Origin = %d %s", resp.StatusCode, body)
	}
	if _, err := New(Options{CORSDomains: "*,https://a.example"}); err == nil {
		t.Error("* mixed with origins accepted")
	}
	if _, err := New(Options{CORSHeaders: "X-*"}); err == nil {
		t.Error("a wildcard header accepted")
	}
}
