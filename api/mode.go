package api

import "fmt"

// Mode is which half of the API a server registers, as OpenTSDB's
// tsd.mode: routes left out are not served at all (404 Endpoint not
// found), as OpenTSDB does not register them.
type Mode uint8

const (
	// ReadWrite serves every route (tsd.mode=rw, the default).
	ReadWrite Mode = iota
	// ReadOnly leaves out every write route: /api/put, /api/rollup,
	// /api/histogram, /api/annotation(s), /api/tree, /api/uid, Influx's
	// /write and /api/v2/write, and remote_write (tsd.mode=ro).
	ReadOnly
	// WriteOnly leaves out every query route: /api/query (and its
	// sub-endpoints), /api/search, /api/suggest, the Prometheus query
	// API and Influx's /query (tsd.mode=wo).
	WriteOnly
)

func (m Mode) String() string {
	switch m {
	case ReadWrite:
		return "rw"
	case ReadOnly:
		return "ro"
	case WriteOnly:
		return "wo"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Routes each mode leaves out: exact paths, then OpenTSDB endpoints.
var (
	readOnlyPaths     = []string{"/api/v1/write", "/write", "/api/v2/write"}
	readOnlyEndpoints = []string{"put", "rollup", "histogram", "annotation", "annotations", "tree", "uid", "compact"}

	writeOnlyPaths = []string{"/api/v1/query", "/api/v1/query_range", "/api/v1/series", "/api/v1/labels",
		labelValuesPath, "/api/v1/metadata", "/api/v1/rules", "/api/v1/query_exemplars", "/api/v1/format_query", "/query"}
	writeOnlyEndpoints = []string{"query", "search", "suggest"}
)

// applyMode removes the routes m does not serve.
func (r *router) applyMode(m Mode) {
	var paths, endpoints []string
	switch m {
	case ReadOnly:
		paths, endpoints = readOnlyPaths, readOnlyEndpoints
	case WriteOnly:
		paths, endpoints = writeOnlyPaths, writeOnlyEndpoints
	}
	for _, p := range paths {
		delete(r.paths, p)
	}
	for _, e := range endpoints {
		delete(r.openTSDB, e)
	}
}
