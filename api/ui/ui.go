package ui

//go:generate sh ./uplot.sh

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// static holds the page, its script and styles, and uPlot.
//
//go:embed static
var static embed.FS

// Prefix is the path under which Asset's files are served.
const Prefix = "/ui/"

// ContentSecurityPolicy allows the page scripts, styles, images and
// requests from its own origin only, no inline script or style, no
// framing and no plugins.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// File is one embedded file with what its answer needs.
type File struct {
	Body        []byte
	ContentType string
	// ETag is a strong validator of Body, quoted.
	ETag string
}

// files are every embedded file by its path under static, read once.
var files = func() map[string]File {
	m := map[string]File{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		name := strings.TrimPrefix(p, "static/")
		m[name] = File{Body: b, ContentType: contentType(name), ETag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		panic("ui: reading the embedded files: " + err.Error()) // the embed is part of the binary
	}
	return m
}()

// contentType is the Content-Type of an embedded file by its extension.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	case ".svg":
		return "image/svg+xml"
	}
	return "text/plain; charset=utf-8" // LICENSE, VERSION
}

// Page is the UI's HTML page, served on "/".
func Page() File { return files["index.html"] }

// Asset returns the file a request path under Prefix names, and false
// for any other path.
func Asset(p string) (File, bool) {
	name, ok := strings.CutPrefix(p, Prefix)
	if !ok || name == "" || name == "index.html" {
		return File{}, false
	}
	f, ok := files[name]
	return f, ok
}

// UPlotVersion is the version of the embedded uPlot.
func UPlotVersion() string { return strings.TrimSpace(string(files["uplot/VERSION"].Body)) }

// WantsHTML reports whether an Accept header asks for HTML, as a
// browser's navigation does; a client that sends no Accept, or */*
// alone, gets the text index.
func WantsHTML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		switch strings.ToLower(strings.TrimSpace(fields[0])) {
		case "text/html", "application/xhtml+xml":
		default:
			continue
		}
		for _, p := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if q, err := strconv.ParseFloat(v, 64); err == nil && q == 0 {
					return false // "not acceptable"
				}
			}
		}
		return true
	}
	return false
}
