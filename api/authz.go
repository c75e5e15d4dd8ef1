package api

import (
	"bytes"
	"encoding/base64"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/auth"
	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/internal/ratelog"
)

// identityKey holds a request's auth.Identity in its user values, for
// checks made once the request is parsed (a delete through /api/query).
type identityKey struct{}

// authorize lets the request run e when access control is off, its path
// is open (Options.OpenPaths), or its credentials name a user whose role
// covers need, the role of route (routeRole); otherwise it answers 401 or
// 403 in the route's protocol's error form, logs the refusal to the audit
// log and reports false.
func (s *Server) authorize(ctx *fasthttp.RequestCtx, e endpoint, route string, need auth.Role) bool {
	a := s.opts.Auth
	if a == nil {
		return true
	}
	if _, open := s.openPaths[string(ctx.Path())]; open {
		return true
	}
	id, outcome := identify(a, ctx, e)
	if outcome == auth.Allowed && !id.Role.Allows(need) {
		outcome = auth.Forbidden
	}
	if outcome != auth.Allowed {
		a.Audit(requestEvent(ctx, id, route, need, outcome))
		denyRequest(ctx, e, outcome, id, route, need)
		return false
	}
	ctx.SetUserValue(identityKey{}, id)
	if need == auth.Admin {
		a.Audit(requestEvent(ctx, id, route, need, auth.Allowed))
	}
	return true
}

// allowAdmin checks, after authorize, an action of a route whose role is
// below admin but that this request turns into an admin action (a delete
// through /api/query). It answers 403 in OpenTSDB's form and reports
// false when the user is not an admin.
func (s *Server) allowAdmin(ctx *fasthttp.RequestCtx, route string) bool {
	a := s.opts.Auth
	if a == nil {
		return true
	}
	// An open path's request holds no identity, so its admin actions
	// stay closed.
	id, _ := ctx.UserValue(identityKey{}).(auth.Identity)
	outcome := auth.Allowed
	if !id.Role.Allows(auth.Admin) {
		outcome = auth.Forbidden
	}
	a.Audit(requestEvent(ctx, id, route, auth.Admin, outcome))
	if outcome != auth.Allowed {
		denyRequest(ctx, endpoint{name: route}, outcome, id, route, auth.Admin)
		return false
	}
	return true
}

// identify reads the request's credentials: an Authorization header
// (Basic, Bearer, or Token as Telegraf's InfluxDB v2 output sends it),
// InfluxDB 1.x's u and p parameters on its paths, or a verified TLS client
// certificate whose common name is a user. Its outcome is Allowed,
// Missing or Invalid.
func identify(a *auth.Authenticator, ctx *fasthttp.RequestCtx, e endpoint) (auth.Identity, auth.Outcome) {
	if h := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization); len(h) > 0 {
		return checkAuthorization(a, h)
	}
	if isInfluxV1(e.name) {
		args := ctx.QueryArgs()
		if u := args.Peek("u"); len(u) > 0 {
			return outcomeOf(a.Basic(string(u), string(args.Peek("p"))))
		}
	}
	if id, ok := a.Cert(RequestTLSState(ctx)); ok {
		return id, auth.Allowed
	}
	return auth.Identity{}, auth.Missing
}

// checkAuthorization checks an Authorization header's credentials.
func checkAuthorization(a *auth.Authenticator, h []byte) (auth.Identity, auth.Outcome) {
	scheme, cred, _ := bytes.Cut(bytes.TrimSpace(h), []byte(" "))
	cred = bytes.TrimSpace(cred)
	switch {
	case bytes.EqualFold(scheme, []byte("Basic")):
		raw, err := base64.StdEncoding.DecodeString(string(cred))
		if err != nil {
			return auth.Identity{}, auth.Invalid
		}
		name, password, ok := bytes.Cut(raw, []byte(":"))
		if !ok {
			return auth.Identity{}, auth.Invalid
		}
		return outcomeOf(a.Basic(string(name), string(password)))
	case bytes.EqualFold(scheme, []byte("Bearer")), bytes.EqualFold(scheme, []byte("Token")):
		return outcomeOf(a.Token(string(cred)))
	}
	return auth.Identity{}, auth.Invalid
}

func outcomeOf(id auth.Identity, err error) (auth.Identity, auth.Outcome) {
	if err != nil {
		return auth.Identity{}, auth.Invalid
	}
	return id, auth.Allowed
}

func isInfluxV1(name string) bool { return name == "/write" || name == "/query" || name == "/ping" }

func requestEvent(ctx *fasthttp.RequestCtx, id auth.Identity, route string, need auth.Role, o auth.Outcome) auth.Event {
	return auth.Event{User: id.User, Client: ratelog.Client(ctx.RemoteAddr()), Route: route,
		Method: string(ctx.Method()), Need: need, Outcome: o}
}

// wwwAuthenticate is the challenge of every 401: Basic, which browsers
// and every client tsd serves understand; bearer tokens are taken too.
const wwwAuthenticate = `Basic realm="tsd", charset="UTF-8"`

// denyRequest answers a refusal: 401 with WWW-Authenticate for missing
// or wrong credentials, 403 for a role that does not cover the route,
// each in the error form of the route's protocol.
func denyRequest(ctx *fasthttp.RequestCtx, e endpoint, o auth.Outcome, id auth.Identity, route string, need auth.Role) {
	status, msg := fasthttp.StatusForbidden, "user "+id.User+" has role "+id.Role.String()+"; "+route+" needs role "+need.String()
	switch o {
	case auth.Missing:
		status, msg = fasthttp.StatusUnauthorized, "authentication required: send a user and password (Basic) or a token (Bearer)"
	case auth.Invalid:
		status, msg = fasthttp.StatusUnauthorized, "authentication failed: unknown user, wrong password or unknown token"
	}
	switch {
	case e.name == "/api/v2/write":
		code := "forbidden"
		if status == fasthttp.StatusUnauthorized {
			code = "unauthorized"
		}
		influxError(ctx, true, status, code, msg)
	case isInfluxV1(e.name):
		influxError(ctx, false, status, "", msg)
	case e.name == "/api/v1/write" || e.name == "/metrics":
		rwText(ctx, status, msg+"\n")
	case e.prom:
		writePromAuthError(ctx, status, msg)
	default:
		writeError(ctx, status, fasthttp.StatusMessage(status), msg)
	}
	if status == fasthttp.StatusUnauthorized {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, wwwAuthenticate)
	}
}

// writePromAuthError answers in the Prometheus API's error shape; the
// errorType names the HTTP status, as Prometheus has none of its own for
// these.
func writePromAuthError(ctx *fasthttp.RequestCtx, status int, msg string) {
	typ := "forbidden"
	if status == fasthttp.StatusUnauthorized {
		typ = "unauthorized"
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	b := append([]byte(nil), `{"status":"error","errorType":`...)
	b = jsonw.JSON.AppendString(b, typ)
	b = append(b, `,"error":`...)
	b = jsonw.JSON.AppendString(b, msg)
	ctx.SetBody(append(b, '}'))
}
