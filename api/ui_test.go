package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/api/ui"
)

// getWith sends a GET with headers and returns the status, the headers and
// the body.
func getWith(t *testing.T, url string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestIndexServesUIToBrowsers: "/" is the web UI's page to a browser's
// Accept and the text index to any other, and the UI's files come with
// their Content-Security-Policy, type and validator.
func TestIndexServesUIToBrowsers(t *testing.T) {
	_, base := startServer(t, Options{Version: testVersion})
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
	code, h, body := getWith(t, base+"/", browser)
	if code != 200 || h.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(body, `<script src="/ui/app.js" defer></script>`) {
		t.Fatalf("GET / as a browser = %d %q %.200s", code, h.Get("Content-Type"), body)
	}
	if h.Get("Content-Security-Policy") != ui.ContentSecurityPolicy || !strings.Contains(h.Get("Vary"), "Accept") {
		t.Errorf("GET / headers %v", h)
	}
	for _, accept := range []string{"", "*/*", "application/json", "text/plain", "text/html;q=0"} {
		code, h, body := getWith(t, base+"/", map[string]string{"Accept": accept})
		if code != 200 || h.Get("Content-Type") != contentTypeText || !strings.HasPrefix(body, "tsd 1.2.3\n") {
			t.Errorf("GET / with Accept %q = %d %q %.40q, want the text index", accept, code, h.Get("Content-Type"), body)
		}
	}
	for path, ctype := range map[string]string{
		"/ui/app.js":                   "text/javascript; charset=utf-8",
		"/ui/style.css":                "text/css; charset=utf-8",
		"/ui/uplot/uPlot.iife.min.js":  "text/javascript; charset=utf-8",
		"/ui/uplot/uPlot.min.css":      "text/css; charset=utf-8",
		"/ui/uplot/LICENSE":            "text/plain; charset=utf-8",
		"/prometheus/ui/uplot/LICENSE": "",
		"/ui/nope.js":                  "",
		"/ui/":                         "",
		"/ui/index.html":               "",
	} {
		code, h, body := getWith(t, base+path, nil)
		if ctype == "" {
			if code != 404 {
				t.Errorf("GET %s = %d, want 404", path, code)
			}
			continue
		}
		if code != 200 || h.Get("Content-Type") != ctype || h.Get("Content-Security-Policy") != ui.ContentSecurityPolicy ||
			h.Get("X-Content-Type-Options") != "nosniff" || len(body) == 0 {
			t.Errorf("GET %s = %d %v", path, code, h)
			continue
		}
		if code, _, _ := getWith(t, base+path, map[string]string{"If-None-Match": h.Get("ETag")}); code != 304 {
			t.Errorf("GET %s with its ETag = %d, want 304", path, code)
		}
	}
	if code, _, _ := do(t, "POST", base+"/ui/app.js", ""); code != 405 {
		t.Errorf("POST /ui/app.js = %d, want 405", code)
	}
	if v := ui.UPlotVersion(); !strings.HasPrefix(v, "1.6.") {
		t.Errorf("embedded uPlot version %q", v)
	}
}

// TestConfigHidesSecrets: /api/config shows the values of keys naming a
// password, secret, token or credential as ********, and every other
// value (paths of key files included) as it is.
func TestConfigHidesSecrets(t *testing.T) {
	config := map[string]string{
		"tsd.storage.format":            "dense",
		"x.bigtable.credentials_json":   `{"private_key":"k"}`,
		"x.auth.password":               "hunter2",
		"x.api_token":                   "t0k",
		"x.client_secret":               "s",
		"x.empty_password":              "",
		"tsd.network.tls.key_file":      "/etc/tsd/key.pem",
		"tsd.http.request.cors_headers": "Authorization, Content-Type",
	}
	_, base := startServer(t, Options{Config: config})
	_, _, body := do(t, "GET", base+"/api/config", "")
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range config {
		want := v
		if isSecretKey(k) && v != "" {
			want = hiddenValue
		}
		if got[k] != want {
			t.Errorf("/api/config %s = %q, want %q", k, got[k], want)
		}
	}
	if strings.Contains(body, "hunter2") || strings.Contains(body, "t0k") || config["x.auth.password"] != "hunter2" {
		t.Errorf("a secret shows, or the options were changed: %s", body)
	}
}

// TestStatusRoute: /api/status answers Options.Status with the mode, 501
// without it; /api/status/series refuses a bad TSUID.
func TestStatusRoute(t *testing.T) {
	_, base := startServer(t, Options{})
	if code, _, body := do(t, "GET", base+"/api/status", ""); code != 501 {
		t.Errorf("/api/status without Status = %d %s", code, body)
	}
	st := Status{Store: StoreStatus{Engine: "pebble", Format: "dense", SaltWidth: 1, SaltBuckets: 20, UIDWidths: UIDWidths{3, 3, 3}},
		Rollups: []RollupAt{{Interval: "1h", RowSpan: "1d", Table: "tsdb-rollup-1h"}}, WAL: &WALStatus{Files: 2, Bytes: 10}}
	_, base = startServer(t, Options{Status: func() Status { return st }, Mode: ReadOnly})
	code, _, body := do(t, "GET", base+"/api/status", "")
	want := `{"mode":"ro","store":{"engine":"pebble","format":"dense","salt_width":1,"salt_buckets":20,` +
		`"uid_widths":{"metric":3,"tagk":3,"tagv":3},"data_table":"","uid_table":"","meta_table":""},"retention":[],` +
		`"rollups":[{"interval":"1h","row_span":"1d","table":"tsdb-rollup-1h","preagg_table":"","default":false}],` +
		`"head":null,"wal":{"dir":"","files":2,"bytes":10,"fsync_interval":""}}`
	if code != 200 || body != want {
		t.Errorf("/api/status = %d\n%s\nwant\n%s", code, body, want)
	}
	if code, _, _ := do(t, "POST", base+"/api/status", ""); code != 405 {
		t.Errorf("POST /api/status = %d, want 405", code)
	}
	if code, _, _ := do(t, "GET", base+"/api/status/series?tsuid=00", ""); code != 501 {
		t.Errorf("/api/status/series without the meta service = %d, want 501", code)
	}
}
