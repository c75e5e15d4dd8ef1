package api

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/auth"
	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/api/ui"
)

// endpoint is one routed API. A nil handle marks an endpoint that a later
// issue builds; until then it answers 501 naming the endpoint.
type endpoint struct {
	name   string                  // canonical path, shown in errors and on /
	handle fasthttp.RequestHandler // nil: planned, not built yet
	prom   bool                    // also served under /prometheus/...
	stream bool                    // reads its body as it streams in (ingest); others get it buffered
	// keepsPoints: an admin route that changes where points are kept,
	// never their values (/api/compact), so the PromQL answer cache's
	// answers hold across it (Server.markAdminChange).
	keepsPoints bool
}

// planned returns an endpoint that answers 501 until its issue lands.
func planned(name string) endpoint { return endpoint{name: name} }

// promPlanned is planned for a Prometheus path, also under /prometheus.
func promPlanned(name string) endpoint { return endpoint{name: name, prom: true} }

// labelValuesPath stands in the paths table for /api/v1/label/<name>/values.
const labelValuesPath = "/api/v1/label/<name>/values"

// router holds the route tables; it is built in New and read-only after.
type router struct {
	// paths maps exact paths of the non-OpenTSDB APIs (doc.go, Routing).
	paths map[string]endpoint
	// openTSDB maps an OpenTSDB endpoint, the lower-cased first path
	// segment after /api/ or /api/v<N>/, to its route; the endpoint
	// handles any deeper segments itself (/api/uid/assign is "uid").
	openTSDB map[string]endpoint
	// prom is the Prometheus API the paths' routes serve.
	prom promRoutes
}

// newRouter builds the route tables. An issue that builds an endpoint
// replaces its planned(...) entry with {name, handler}. /api/v1/query is
// Prometheus's only when the request has a query parameter; its handler
// must pass a request with m, tsuid or a JSON body to OpenTSDB's query
// endpoint (doc.go, Routing).
func (s *Server) newRouter() *router {
	ing := newIngestAPI(s)
	meta := newMetaAPI(s)
	prom := newPromRoutes(s)
	return &router{
		prom: prom,
		paths: map[string]endpoint{
			"/":                        {name: "/", handle: s.handleIndex},
			ui.Prefix:                  {name: ui.Prefix, handle: handleUIFile}, // every path under it
			"/api/status":              {name: "/api/status", handle: s.handleStatus},
			"/api/status/series":       meta.route("/api/status/series", (*metaAPI).handleSeriesSpan),
			"/metrics":                 meta.always("/metrics", (*metaAPI).handleMetrics),
			"/api/v1/query":            prom.queryRoute(s),
			"/api/v1/query_range":      prom.route("/api/v1/query_range", (*promapi.API).QueryRange),
			"/api/v1/series":           prom.route("/api/v1/series", (*promapi.API).Series),
			"/api/v1/labels":           prom.route("/api/v1/labels", (*promapi.API).Labels),
			labelValuesPath:            prom.route(labelValuesPath, (*promapi.API).LabelValues),
			"/api/v1/metadata":         prom.route("/api/v1/metadata", (*promapi.API).Metadata),
			"/api/v1/rules":            prom.route("/api/v1/rules", (*promapi.API).Rules),
			"/api/v1/query_exemplars":  prom.route("/api/v1/query_exemplars", (*promapi.API).QueryExemplars),
			"/api/v1/format_query":     prom.route("/api/v1/format_query", (*promapi.API).FormatQuery),
			"/api/v1/status/buildinfo": prom.route("/api/v1/status/buildinfo", (*promapi.API).BuildInfo),
			"/api/v1/write":            ing.route("/api/v1/write", true, (*ingestAPI).handleRemoteWrite),
			"/write":                   ing.route("/write", false, (*ingestAPI).handleWrite),
			"/api/v2/write":            ing.route("/api/v2/write", false, (*ingestAPI).handleWriteV2),
			"/ping":                    {name: "/ping", handle: handlePing},
			"/query":                   {name: "/query", handle: handleInfluxQuery},

			// Prometheus's status pages, for Grafana's and promtool's views.
			"/api/v1/status/flags":       prom.route("/api/v1/status/flags", (*promapi.API).Flags),
			"/api/v1/status/runtimeinfo": prom.route("/api/v1/status/runtimeinfo", (*promapi.API).RuntimeInfo),
			"/api/v1/status/tsdb":        prom.route("/api/v1/status/tsdb", (*promapi.API).TSDBStatus),
		},
		openTSDB: map[string]endpoint{
			"version":     {name: "/api/version", handle: s.handleVersion},
			"put":         ing.route("/api/put", false, (*ingestAPI).handlePut),
			"query":       {name: "/api/query", handle: s.handleQuery},
			"suggest":     meta.route("/api/suggest", (*metaAPI).handleSuggest),
			"search":      meta.route("/api/search", (*metaAPI).handleSearch),
			"uid":         meta.route("/api/uid", (*metaAPI).handleUID),
			"annotation":  s.annotationRoute("/api/annotation"),
			"annotations": s.annotationRoute("/api/annotations"),
			"aggregators": meta.always("/api/aggregators", (*metaAPI).handleAggregators),
			"config":      meta.always("/api/config", (*metaAPI).handleConfig),
			"stats":       meta.always("/api/stats", (*metaAPI).handleStats),
			"dropcaches":  meta.always("/api/dropcaches", (*metaAPI).handleDropCaches),
			"compact":     {name: "/api/compact", handle: s.handleCompact, keepsPoints: true},
			"tree":        s.treeRoute("/api/tree"),
			"rollup":      ing.route("/api/rollup", false, (*ingestAPI).handleRollup),
			"histogram":   ing.route("/api/histogram", false, (*ingestAPI).handleHistogram),
		},
	}
}

// lookupPath finds an exact-path endpoint, including Prometheus paths
// under the /prometheus prefix and /api/v1/label/<name>/values.
func (r *router) lookupPath(path []byte) (endpoint, bool) {
	if e, ok := r.lookupExact(path); ok {
		return e, true
	}
	if !bytes.HasPrefix(path, []byte("/prometheus/")) {
		return endpoint{}, false
	}
	e, ok := r.lookupExact(path[len("/prometheus"):])
	return e, ok && e.prom
}

func (r *router) lookupExact(path []byte) (endpoint, bool) {
	if e, ok := r.paths[string(path)]; ok {
		return e, true
	}
	if bytes.HasPrefix(path, []byte(ui.Prefix)) {
		e, ok := r.paths[ui.Prefix]
		return e, ok
	}
	if isLabelValuesPath(path) {
		e, ok := r.paths[labelValuesPath] // absent in a write-only server
		return e, ok
	}
	return endpoint{}, false
}

// isLabelValuesPath matches /api/v1/label/<name>/values with a non-empty
// name that holds no slash.
func isLabelValuesPath(path []byte) bool {
	name, ok := bytes.CutPrefix(path, []byte("/api/v1/label/"))
	if !ok {
		return false
	}
	name, ok = bytes.CutSuffix(name, []byte("/values"))
	return ok && len(name) > 0 && bytes.IndexByte(name, '/') < 0
}

// maxAPIVersion is the highest OpenTSDB API version (/api/v<N>/) served.
const maxAPIVersion = 1

// routeError is an OpenTSDB routing failure: a bad or unsupported version.
type routeError struct {
	code             int
	message, details string
}

// parseAPIPath splits an OpenTSDB API path the way OpenTSDB 2.4's
// HttpQuery.getQueryBaseRoute does. It returns the endpoint segment (not yet
// lower-cased), ok=false when the path is not under /api, and a routeError
// for a version above maxAPIVersion (501) or one that is not an integer
// (400). A segment is a version when it is "v" or "V" followed by a digit.
func parseAPIPath(path []byte) (seg []byte, ok bool, rerr *routeError) {
	seg, rest := nextSegment(path)
	if !bytes.EqualFold(seg, []byte("api")) {
		return nil, false, nil
	}
	seg, rest = nextSegment(rest)
	if len(seg) > 1 && (seg[0] == 'v' || seg[0] == 'V') && isDigit(seg[1]) {
		if rerr := checkAPIVersion(seg[1:]); rerr != nil {
			return nil, true, rerr
		}
		seg, _ = nextSegment(rest)
	}
	return seg, true, nil
}

// checkAPIVersion validates the digits after "/api/v".
func checkAPIVersion(digits []byte) *routeError {
	v, err := strconv.ParseInt(string(digits), 10, 32)
	if err != nil {
		return &routeError{fasthttp.StatusBadRequest, "Invalid API version format supplied",
			"API version [" + string(digits) + "] cannot be parsed to an integer"}
	}
	if v > maxAPIVersion {
		return &routeError{fasthttp.StatusNotImplemented,
			"Requested API version is greater than the max implemented",
			"API version [" + strconv.FormatInt(v, 10) + "] is greater than the max [" +
				strconv.Itoa(maxAPIVersion) + "]"}
	}
	return nil
}

// nextSegment returns the path segment after the leading slash of p and the
// remainder starting at the next slash.
func nextSegment(p []byte) (seg, rest []byte) {
	if len(p) > 0 && p[0] == '/' {
		p = p[1:]
	}
	if i := bytes.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lookupOpenTSDB finds the OpenTSDB endpoint named by seg, ignoring case.
func (r *router) lookupOpenTSDB(seg []byte) (endpoint, bool) {
	var buf [32]byte
	e, ok := r.openTSDB[string(appendLower(buf[:0], seg))]
	return e, ok
}

// appendLower appends the ASCII lower case of s.
func appendLower(dst, s []byte) []byte {
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// handle is the fasthttp handler: it routes as the package doc describes.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	if s.opts.TLS.Required && !ctx.IsTLS() {
		s.refusePlaintextHTTP(ctx)
		return
	}
	if s.cors.domains != nil {
		if s.cors.apply(ctx) {
			return
		}
		if len(ctx.Request.Header.Peek("Origin")) > 0 {
			defer s.cors.reapply(ctx)
		}
	}
	path := ctx.Path()
	if e, ok := s.routes.lookupPath(path); ok {
		s.serve(ctx, e)
		return
	}
	// OpenTSDB's endpoints and errors answer ?jsonp=fn as fn(<json>), when
	// JSONP is on.
	cb, ok := jsonpCallback(ctx)
	if !ok {
		writeError(ctx, fasthttp.StatusBadRequest, "Invalid jsonp callback",
			"The jsonp parameter must be a JavaScript identifier, optionally dotted")
		return
	}
	if cb != nil && !s.opts.JSONP {
		writeError(ctx, fasthttp.StatusBadRequest, "JSONP disabled", jsonpOffDetails)
		return
	}
	if cb != nil {
		ctx.SetUserValue(jsonpKey{}, cb) // for answers that stream (api/answer)
		defer wrapJSONP(ctx, cb)
	}
	seg, isAPI, rerr := parseAPIPath(path)
	if rerr != nil {
		writeError(ctx, rerr.code, rerr.message, rerr.details)
		return
	}
	if isAPI && ctx.IsOptions() {
		// RpcHandler without tsd.http.request.cors_domains refuses OPTIONS
		// before it looks the endpoint up (with them, cors.apply answered).
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed",
			"The HTTP method [OPTIONS] is not permitted")
		return
	}
	if e, ok := s.routes.lookupOpenTSDB(seg); isAPI && ok {
		s.serve(ctx, e)
		return
	}
	writeError(ctx, fasthttp.StatusNotFound, "Endpoint not found", "")
}

// serveEndpoint runs e, or answers 501 when e is not built yet.
func serveEndpoint(ctx *fasthttp.RequestCtx, e endpoint) {
	if e.handle == nil {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: "+e.name, "")
		return
	}
	e.handle(ctx)
}

// access is the role a route needs when access control is on
// (Options.Auth): read for GET and HEAD (a GET with method_override
// counts as the method it names), change for every other method.
type access struct{ read, change auth.Role }

var (
	readAccess  = access{auth.Read, auth.Read}
	writeAccess = access{auth.Write, auth.Write}
	adminAccess = access{auth.Admin, auth.Admin}
	// readOrAdmin reads with read and changes state with admin.
	readOrAdmin = access{auth.Read, auth.Admin}
)

// routeRoles is the role every route needs when access control is on,
// the one place that says so (docs/operations.md, Securing tsd, lists
// it). Keys are an endpoint's canonical name, or name/sub for an
// OpenTSDB sub-endpoint, which wins over its endpoint's line. A route
// with no line needs admin, so a new route is closed to all but admins
// until it gets a line here. A delete through /api/query needs admin
// too, checked once the query is parsed (Server.allowAdmin).
var routeRoles = map[string]access{
	"/":        readAccess,
	"/metrics": readAccess,
	// The web UI's files, and what its Status and Series pages read.
	ui.Prefix:            readAccess,
	"/api/status":        readAccess,
	"/api/status/series": readAccess,
	// OpenTSDB.
	"/api/version":        readAccess,
	"/api/aggregators":    readAccess,
	"/api/config":         readAccess,
	"/api/stats":          readAccess,
	"/api/stats/query":    readAccess, // lists queries with their headers, cookies and credentials hidden
	"/api/suggest":        readAccess,
	"/api/search":         readAccess,
	"/api/query":          readAccess,
	"/api/query/gexp":     readAccess, // GET only; it never deletes
	"/api/annotation":     readOrAdmin,
	"/api/annotations":    readOrAdmin,
	"/api/tree":           readOrAdmin,
	"/api/uid":            adminAccess,
	"/api/uid/assign":     adminAccess,
	"/api/uid/rename":     adminAccess,
	"/api/uid/uidmeta":    readOrAdmin,
	"/api/uid/tsmeta":     readOrAdmin,
	"/api/dropcaches":     adminAccess,
	"/api/compact":        adminAccess, // POST only: tsd compact --url
	"/api/put":            writeAccess,
	"/api/rollup":         writeAccess,
	"/api/rollup/rebuild": adminAccess, // tsd rollup rebuild --url
	"/api/histogram":      writeAccess,
	"/api/v1/write":       writeAccess,
	"/write":              writeAccess,
	"/api/v2/write":       writeAccess,
	"/query":              writeAccess, // InfluxDB 1.x: Telegraf's CREATE DATABASE before it writes
	"/ping":               readAccess,
	"/api/v1/query":       readAccess, // also OpenTSDB's /api/query without a PromQL query
	"/api/v1/query_range": readAccess,
	// The Prometheus HTTP API reads; Grafana POSTs its queries as forms.
	"/api/v1/series":             readAccess,
	"/api/v1/labels":             readAccess,
	labelValuesPath:              readAccess,
	"/api/v1/metadata":           readAccess,
	"/api/v1/rules":              readAccess,
	"/api/v1/alerts":             readAccess,
	"/api/v1/query_exemplars":    readAccess,
	"/api/v1/format_query":       readAccess,
	"/api/v1/parse_query":        readAccess,
	"/api/v1/status/buildinfo":   readAccess,
	"/api/v1/status/config":      readAccess,
	"/api/v1/status/flags":       readAccess,
	"/api/v1/status/runtimeinfo": readAccess,
	"/api/v1/status/tsdb":        readAccess,
	"/api/v1/status/walreplay":   readAccess,
	"/api/v1/targets":            readAccess,
	// Tree sub-endpoints that read whatever the method: /test runs the
	// rules over TSMeta and writes nothing.
	"/api/tree/test":       readAccess,
	"/api/tree/collisions": readAccess,
	"/api/tree/notmatched": readAccess,
}

// RouteNames lists every route as routeRoles names it: endpoint names,
// endpoint/sub for OpenTSDB sub-endpoints, and /api/v1/label/<name>/values
// for the label values paths; sorted.
func RouteNames() []string {
	names := make([]string, 0, len(routeRoles))
	for n := range routeRoles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// routeRole returns the route the request reaches, as routeRoles names
// it, and the role it needs.
func routeRole(ctx *fasthttp.RequestCtx, e endpoint) (string, auth.Role) {
	route := e.name
	acc, ok := routeRoles[route]
	if sub := apiSub(ctx.Path()); sub != "" && strings.HasPrefix(route, "/api/") {
		if a, subOK := routeRoles[route+"/"+sub]; subOK {
			route, acc, ok = route+"/"+sub, a, true
		}
	}
	if !ok {
		return route, auth.Admin
	}
	if isReadMethod(ctx) {
		return route, acc.read
	}
	return route, acc.change
}

// isReadMethod reports GET and HEAD, a GET with method_override counting
// as the method it names, as OpenTSDB's endpoints read it.
func isReadMethod(ctx *fasthttp.RequestCtx) bool {
	switch {
	case ctx.IsGet():
		o := ctx.QueryArgs().Peek("method_override")
		return len(o) == 0 || bytes.EqualFold(o, []byte("get"))
	case ctx.IsHead():
		return true
	}
	return false
}

// apiSub returns the lower-cased segment after an OpenTSDB endpoint's
// (/api/uid/assign and /api/v1/uid/assign: "assign"), "" for none.
func apiSub(path []byte) string {
	seg, rest := nextSegment(path)
	if !bytes.EqualFold(seg, []byte("api")) {
		return ""
	}
	seg, rest = nextSegment(rest)
	if len(seg) > 1 && (seg[0] == 'v' || seg[0] == 'V') && isDigit(seg[1]) {
		_, rest = nextSegment(rest)
	}
	sub, _ := nextSegment(rest)
	return string(appendLower(nil, sub))
}
