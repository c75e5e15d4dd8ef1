package ui

import (
	"strings"
	"testing"
)

func TestWantsHTML(t *testing.T) {
	for accept, want := range map[string]bool{
		"": false, "*/*": false, "application/json": false, "text/plain, */*;q=0.1": false,
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": true, // a browser's navigation
		"TEXT/HTML": true, "application/xhtml+xml": true, "text/html;q=0.5": true,
		"text/html;q=0": false, "text/html; q=0.0": false, "application/json, text/html;level=1": true,
	} {
		if got := WantsHTML(accept); got != want {
			t.Errorf("WantsHTML(%q) = %v, want %v", accept, got, want)
		}
	}
}

// TestAssets: every file the page loads is served under Prefix with its
// type and a validator; the page itself only on "/", nothing outside
// Prefix, and the page loads no inline script or style, which the policy
// would block.
func TestAssets(t *testing.T) {
	page := string(Page().Body)
	for _, ref := range []string{"/ui/app.js", "/ui/style.css", "/ui/uplot/uPlot.iife.min.js", "/ui/uplot/uPlot.min.css"} {
		if !strings.Contains(page, `"`+ref+`"`) {
			t.Errorf("the page does not load %s", ref)
		}
		f, ok := Asset(ref)
		if !ok || len(f.Body) == 0 || !strings.HasPrefix(f.ETag, `"`) || f.ContentType == "" {
			t.Errorf("Asset(%s) = %v, %q %q", ref, ok, f.ContentType, f.ETag)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<style") || strings.Contains(page, " style=") ||
		strings.Contains(page, " onclick=") {
		t.Error("the page holds inline script or style, which ContentSecurityPolicy forbids")
	}
	for _, p := range []string{"/ui/", "/ui/index.html", "/app.js", "/ui/nope", "ui/app.js"} {
		if _, ok := Asset(p); ok {
			t.Errorf("Asset(%q) found", p)
		}
	}
	if Page().ContentType != "text/html; charset=utf-8" {
		t.Errorf("page type %q", Page().ContentType)
	}
	if !strings.Contains(ContentSecurityPolicy, "script-src 'self';") || strings.Contains(ContentSecurityPolicy, "unsafe") {
		t.Errorf("policy %q", ContentSecurityPolicy)
	}
}
