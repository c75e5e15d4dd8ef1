package api

import (
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// appendVersionJSON appends v as OpenTSDB's /api/version object, fields in
// the order OpenTSDB documents them.
func appendVersionJSON(dst []byte, v VersionInfo) []byte {
	fields := [...]struct{ k, v string }{
		{"version", v.Version},
		{"short_revision", v.ShortRevision},
		{"full_revision", v.FullRevision},
		{"timestamp", v.Timestamp},
		{"repo_status", v.RepoStatus},
		{"user", v.User},
		{"host", v.Host},
		{"repo", v.Repo},
		{"branch", v.Branch},
	}
	dst = append(dst, '{')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.JSON.AppendPair(dst, f.k, f.v)
	}
	return append(dst, '}')
}

// handleVersion serves /api/version: GET or POST, as OpenTSDB.
func (s *Server) handleVersion(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	ctx.SetContentType(contentTypeJSON)
	ctx.Response.SetBodyRaw(s.versionJSON) // immutable after New
}
