package api

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestParseAPIPath(t *testing.T) {
	for _, tc := range []struct {
		path, seg string
		isAPI     bool
		code      int
	}{
		{"/api/put", "put", true, 0},
		{"/API/Put/x", "Put", true, 0},
		{"/api/v1/put", "put", true, 0},
		{"/api/V1/put", "put", true, 0},
		{"/api/v0/put", "put", true, 0},
		{"/api/v01/put", "put", true, 0},
		{"/api/v2/put", "", true, 501},
		{"/api/v1a/put", "", true, 400},
		{"/api/vx/put", "vx", true, 0},
		{"/api/v", "v", true, 0},
		{"/api/v1", "", true, 0},
		{"/api", "", true, 0},
		{"/apis/put", "", false, 0},
		{"/", "", false, 0},
		{"", "", false, 0},
	} {
		seg, isAPI, rerr := parseAPIPath([]byte(tc.path))
		code := 0
		if rerr != nil {
			code = rerr.code
		}
		if string(seg) != tc.seg || isAPI != tc.isAPI || code != tc.code {
			t.Errorf("parseAPIPath(%q) = %q, %v, %d; want %q, %v, %d",
				tc.path, seg, isAPI, code, tc.seg, tc.isAPI, tc.code)
		}
	}
}

func TestRouteTablesDisjoint(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range s.routes.paths {
		names[e.name] = true
	}
	for key, e := range s.routes.openTSDB {
		if names[e.name] {
			t.Errorf("%s is in both route tables", e.name)
		}
		if e.name != "/api/"+key {
			t.Errorf("OpenTSDB endpoint %q is named %q, want /api/%s", key, e.name, key)
		}
	}
}

// FuzzRoute checks routing never panics and sends every path somewhere
// consistent: an API segment only for /api paths.
func FuzzRoute(f *testing.F) {
	for _, p := range []string{"/api/v1/query", "/api/v2/x", "/prometheus/api/v1/label/a/values",
		"/api/v1/label/<name>/values", "/API/V9999999999999/x", "/", ""} {
		f.Add(p)
	}
	s, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		s.routes.lookupPath([]byte(path))
		seg, isAPI, rerr := parseAPIPath([]byte(path))
		if !isAPI && (seg != nil || rerr != nil) {
			t.Fatalf("%q: not an API path but seg %q, err %v", path, seg, rerr)
		}
		s.routes.lookupOpenTSDB(seg)
	})
}

// FuzzAppendError checks the error JSON is valid and round-trips.
func FuzzAppendError(f *testing.F) {
	f.Add(404, "Endpoint not found", "")
	f.Add(400, "bad \"quote\" \\ \x00\x1f\n\t", "détails ✓ \xff")
	f.Fuzz(func(t *testing.T, code int, msg, details string) {
		var got struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Details string `json:"details"`
			} `json:"error"`
		}
		b := appendError(nil, code, msg, details)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("invalid JSON %s: %v", b, err)
		}
		want := func(s string) string { return string([]rune(s)) } // bad UTF-8 → U+FFFD
		if got.Error.Code != code || got.Error.Message != want(msg) || got.Error.Details != want(details) {
			t.Fatalf("round trip of %d %q %q = %+v", code, msg, details, got.Error)
		}
		if !utf8.Valid(b) {
			t.Fatalf("output is not UTF-8: %q", b)
		}
	})
}

// TestOptionsOpenTSDB: without CORS domains configured, OpenTSDB's
// RpcHandler refuses every OPTIONS request on its routes before looking
// the endpoint up: 405 "Method not allowed", details "The HTTP method
// [OPTIONS] is not permitted" (no "for this endpoint").
func TestOptionsOpenTSDB(t *testing.T) {
	_, base := startServer(t, Options{})
	want := `{"error":{"code":405,"message":"Method not allowed","details":"The HTTP method [OPTIONS] is not permitted"}}`
	for _, path := range []string{"/api/version", "/api/v1/suggest?type=metrics", "/api/put", "/api/no.such"} {
		if code, _, body := do(t, "OPTIONS", base+path, ""); code != 405 || body != want {
			t.Errorf("OPTIONS %s = %d %s, want 405 %s", path, code, body, want)
		}
	}
}
