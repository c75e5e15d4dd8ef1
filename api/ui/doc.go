// Package ui holds tsd's web UI: the page served on "/" to browsers and
// the scripts, styles and chart library it loads from /ui/. Everything
// is embedded in the binary, so the UI needs nothing at run time but
// the daemon; package api serves it (this package has no HTTP code).
//
// The page is plain HTML, JavaScript and CSS without a build step. It
// has three views, chosen by the URL's fragment so a link reproduces
// what it shows: Graph (#graph?...: an OpenTSDB query builder and a
// PromQL editor drawing one chart, whose whole query lives in the
// fragment), Series (#series?...: metrics, their tags and series, a
// series' first and last points) and Status (#status). It reads only
// through the HTTP API, with GET except for the POST of /api/query, which
// reads too; it never calls a route that changes data.
//
// The page sends no credentials of its own: with access control on, "/"
// answers 401 with a Basic challenge, the browser asks the user once,
// and then sends the same credentials with the page's same-origin
// requests.
//
// Charts are drawn by uPlot (MIT), committed under static/uplot with its
// licence and version; uplot.sh, run by go generate, fetched them with
// npm and documents how to update them. ContentSecurityPolicy is the
// policy api sends with the UI's files: scripts and styles only from
// the daemon itself, none inline.
package ui
