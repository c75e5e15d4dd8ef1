package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/tsd-db/tsd/api/auth"
)

// TestRouteRolesCoverRoutes: every route the server has is in routeRoles,
// so no route gets admin by omission; and a path the table does not list
// needs admin.
func TestRouteRolesCoverRoutes(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all []endpoint
	for _, e := range s.routes.paths {
		all = append(all, e)
	}
	for _, e := range s.routes.openTSDB {
		all = append(all, e)
	}
	for _, e := range all {
		if _, ok := routeRoles[e.name]; !ok {
			t.Errorf("route %s has no line in routeRoles (api/routes.go): it needs admin", e.name)
		}
	}
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/api/brandnew")
	if route, need := routeRole(&ctx, endpoint{name: "/api/brandnew"}); need != auth.Admin || route != "/api/brandnew" {
		t.Errorf("unlisted route needs %v, want admin", need)
	}
}

// TestRouteRole: the role of a request by path and method, sub-endpoints
// and method_override included.
func TestRouteRole(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, uri string
		route       string
		need        auth.Role
	}{
		{"GET", "/api/query?m=sum:x", "/api/query", auth.Read},
		{"POST", "/api/query", "/api/query", auth.Read},
		{"POST", "/api/put", "/api/put", auth.Write},
		{"POST", "/api/v1/put", "/api/put", auth.Write},
		{"GET", "/api/uid/assign?metric=x", "/api/uid/assign", auth.Admin},
		{"POST", "/api/V1/UID/Rename", "/api/uid/rename", auth.Admin},
		{"GET", "/api/uid/uidmeta?uid=000001&type=metric", "/api/uid/uidmeta", auth.Read},
		{"POST", "/api/uid/uidmeta", "/api/uid/uidmeta", auth.Admin},
		{"GET", "/api/uid/uidmeta?method_override=delete", "/api/uid/uidmeta", auth.Admin},
		{"GET", "/api/uid/whatever", "/api/uid", auth.Admin},
		{"GET", "/api/annotation?start_time=1", "/api/annotation", auth.Read},
		{"DELETE", "/api/annotation", "/api/annotation", auth.Admin},
		{"GET", "/api/annotation?method_override=post", "/api/annotation", auth.Admin},
		{"DELETE", "/api/dropcaches", "/api/dropcaches", auth.Admin},
		{"GET", "/api/stats/query", "/api/stats/query", auth.Read},
		{"GET", "/api/stats/jvm", "/api/stats", auth.Read},
		{"POST", "/api/v1/query_range", "/api/v1/query_range", auth.Read},
		{"GET", "/prometheus/api/v1/label/job/values", labelValuesPath, auth.Read},
		{"POST", "/api/v1/write", "/api/v1/write", auth.Write},
		{"POST", "/query", "/query", auth.Write},
		{"GET", "/metrics", "/metrics", auth.Read},
		{"GET", "/api/tree?treeid=1", "/api/tree", auth.Read},
		{"POST", "/api/tree", "/api/tree", auth.Admin},
		{"GET", "/api/tree/rule?treeid=1&level=0&order=0&method_override=delete", "/api/tree", auth.Admin},
		{"PUT", "/api/tree/rules", "/api/tree", auth.Admin},
		{"GET", "/api/tree/branch?treeid=1", "/api/tree", auth.Read},
		{"POST", "/api/tree/test", "/api/tree/test", auth.Read},
		{"POST", "/api/v1/tree/collisions", "/api/tree/collisions", auth.Read},
		{"PUT", "/api/tree/notmatched", "/api/tree/notmatched", auth.Read},
	} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(tc.method)
		ctx.Request.SetRequestURI(tc.uri)
		e, ok := s.routes.lookupPath(ctx.Path())
		if !ok {
			seg, _, _ := parseAPIPath(ctx.Path())
			if e, ok = s.routes.lookupOpenTSDB(seg); !ok {
				t.Fatalf("%s: no route", tc.uri)
			}
		}
		if route, need := routeRole(&ctx, e); route != tc.route || need != tc.need {
			t.Errorf("%s %s = %s needs %v, want %s %v", tc.method, tc.uri, route, need, tc.route, tc.need)
		}
	}
}

// TestOperationsDocListsRouteRoles: docs/operations.md's route table
// (Securing tsd) lists every line of routeRoles with its roles.
func TestOperationsDocListsRouteRoles(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for route, acc := range routeRoles {
		want := acc.read.String()
		if acc.change != acc.read {
			want = acc.read.String() + ", " + acc.change.String() + " to change"
		}
		re := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(route) + "` \\| " + regexp.QuoteMeta(want) + " \\|")
		if !re.Match(doc) {
			t.Errorf("docs/operations.md lacks the row | `%s` | %s |", route, want)
		}
	}
}

func testAuthenticator(t testing.TB) *auth.Authenticator {
	h, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("tok"))
	path := filepath.Join(t.TempDir(), "users.yaml")
	yaml := fmt.Sprintf("users:\n  - name: u\n    password_bcrypt: %q\n    token_sha256: %s\n    role: write\n", h, hex.EncodeToString(sum[:]))
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Options{Path: path, PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// FuzzCheckAuthorization: any Authorization header is read without
// panic, and only the user's exact credentials identify the user.
func FuzzCheckAuthorization(f *testing.F) {
	a := testAuthenticator(f)
	good := map[string]bool{
		"Basic " + base64.StdEncoding.EncodeToString([]byte("u:pw")): true,
		"Bearer tok": true, "Token tok": true, "bearer tok": true, "token  tok ": true, " Basic  " + base64.StdEncoding.EncodeToString([]byte("u:pw")): true,
	}
	for h := range good {
		f.Add(h)
	}
	for _, h := range []string{"Basic", "Basic !!", "Basic " + base64.StdEncoding.EncodeToString([]byte("u")), "Digest x", "", "Bearer"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		id, o := checkAuthorization(a, []byte(h))
		if o == auth.Allowed && (id.User != "u" || id.Role != auth.Write) {
			t.Fatalf("%q: %v", h, id)
		}
		if good[h] && o != auth.Allowed {
			t.Fatalf("%q: %v, want allowed", h, o)
		}
		if o != auth.Allowed && o != auth.Invalid {
			t.Fatalf("%q: outcome %v", h, o)
		}
	})
}

// BenchmarkAuthorize is the cost access control adds to each request of
// a writer sending Basic credentials (the bcrypt outcome cached) or a
// bearer token.
func BenchmarkAuthorize(b *testing.B) {
	a := testAuthenticator(b)
	s := &Server{opts: Options{Auth: a}, openPaths: map[string]struct{}{}}
	e := endpoint{name: "/api/put"}
	for _, h := range []struct{ name, header string }{
		{"basic", "Basic " + base64.StdEncoding.EncodeToString([]byte("u:pw"))},
		{"bearer", "Bearer tok"},
	} {
		b.Run(h.name, func(b *testing.B) {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod("POST")
			ctx.Request.SetRequestURI("/api/put")
			ctx.Request.Header.Set("Authorization", h.header)
			b.ReportAllocs()
			for b.Loop() {
				route, need := routeRole(&ctx, e)
				if !s.authorize(&ctx, e, route, need) {
					b.Fatal("refused")
				}
			}
		})
	}
}
