package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	"golang.org/x/crypto/bcrypt"
)

// authUser is a user of the test's users file: a password and a token.
type authUser struct{ name, role, password, token string }

var authUsers = []authUser{
	{"reader", "read", "r-pass", "r-token"},
	{"writer", "write", "w-pass", "w-token"},
	{"admin", "admin", "a-pass", "a-token"},
}

// usersYAML is a users file for users, bcrypt at its lowest cost.
func usersYAML(t *testing.T, users ...authUser) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("users:\n")
	for _, u := range users {
		h, err := bcrypt.GenerateFromPassword([]byte(u.password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(u.token))
		fmt.Fprintf(&b, "  - name: %s\n    password_bcrypt: %q\n    token_sha256: %s\n    role: %s\n",
			u.name, h, hex.EncodeToString(sum[:]), u.role)
	}
	return b.String()
}

// writeFileAtomic replaces path's content at once, as editors and config
// tools do, so the daemon never reads half a file.
func writeFileAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// creds is what a client sends: a user and password, or a token, or
// (both empty) nothing.
type creds struct{ user, password, token string }

// routeClass is what a request does, which fixes the role it needs.
type routeClass int

const (
	classRead routeClass = iota
	classWrite
	classAdmin
)

// errForm is the protocol whose error shape a refusal answers in.
type errForm int

const (
	formOpenTSDB errForm = iota
	formProm
	formInfluxV1
	formInfluxV2
	formRemoteWrite
)

// clientShape replays one client's request as the real client sends it,
// credentials included; token says the client sends a token rather than
// a user and password.
type clientShape struct {
	name  string
	class routeClass
	form  errForm
	token bool
	req   func(t *testing.T, base string, c creds) *http.Request
}

var assignSeq atomic.Int64

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func newReq(t *testing.T, method, u string, body []byte, hdr ...string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

func basic(req *http.Request, c creds) *http.Request {
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	return req
}

func withToken(req *http.Request, scheme string, c creds) *http.Request {
	if c.token != "" {
		req.Header.Set("Authorization", scheme+" "+c.token)
	}
	return req
}

func remoteWriteBody(t *testing.T) []byte {
	wr := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: "auth_up"}, {Name: "job", Value: "api"}},
		Samples: []prompb.Sample{{Value: 1, Timestamp: 1356998404000}},
	}}}
	raw, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return snappy.Encode(nil, raw)
}

// clientShapes are the requests of Telegraf's outputs, Prometheus's
// remote_write and Grafana's data sources, with their credentials where
// each tool puts them.
var clientShapes = []clientShape{
	{"grafana-opentsdb/suggest", classRead, formOpenTSDB, false, func(t *testing.T, base string, c creds) *http.Request {
		return basic(newReq(t, "GET", base+"/api/suggest?type=metrics&q=auth&max=1000", nil), c)
	}},
	{"grafana-opentsdb/query", classRead, formOpenTSDB, false, func(t *testing.T, base string, c creds) *http.Request {
		body := `{"start":1356998000,"end":1356999000,"queries":[{"metric":"auth.m","aggregator":"sum","downsample":"1m-avg","tags":{}}],"msResolution":false,"globalAnnotations":true,"showQuery":true}`
		return basic(newReq(t, "POST", base+"/api/query", []byte(body), "Content-Type", "application/json"), c)
	}},
	{"grafana-prometheus/query_range", classRead, formProm, false, func(t *testing.T, base string, c creds) *http.Request {
		form := url.Values{"query": {"auth_up"}, "start": {"1356998000"}, "end": {"1356999000"}, "step": {"60"}}
		return basic(newReq(t, "POST", base+"/api/v1/query_range", []byte(form.Encode()),
			"Content-Type", "application/x-www-form-urlencoded"), c)
	}},
	{"grafana-prometheus/labels", classRead, formProm, false, func(t *testing.T, base string, c creds) *http.Request {
		return basic(newReq(t, "GET", base+"/prometheus/api/v1/labels", nil), c)
	}},
	{"telegraf-opentsdb/http", classWrite, formOpenTSDB, false, func(t *testing.T, base string, c creds) *http.Request {
		// Telegraf's opentsdb output puts the user in the URL; Go's client
		// sends it as Basic.
		u, _ := url.Parse(base + "/api/put")
		if c.user != "" {
			u.User = url.UserPassword(c.user, c.password)
		}
		body := gzipped(t, []byte(`[{"metric":"auth.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`+"\n]"))
		return newReq(t, "POST", u.String(), body, "Content-Type", "application/json",
			"Content-Encoding", "gzip", "User-Agent", "Go-http-client/1.1")
	}},
	{"telegraf-influxdb/create-database", classWrite, formInfluxV1, false, func(t *testing.T, base string, c creds) *http.Request {
		form := url.Values{"q": {`CREATE DATABASE "telegraf"`}}
		return basic(newReq(t, "POST", base+"/query", []byte(form.Encode()),
			"Content-Type", "application/x-www-form-urlencoded", "User-Agent", "Telegraf/1.36.1 Go/1.24.5"), c)
	}},
	{"telegraf-influxdb/write", classWrite, formInfluxV1, false, func(t *testing.T, base string, c creds) *http.Request {
		req := newReq(t, "POST", base+"/write?db=telegraf", nil, "Content-Type", "text/plain; charset=utf-8",
			"Content-Encoding", "gzip", "User-Agent", "Telegraf/1.36.1 Go/1.24.5")
		// Chunked: Telegraf streams its body, no Content-Length.
		req.Body = io.NopCloser(bytes.NewReader(gzipped(t, []byte("auth_cpu,host=a usage=1.5 1356998400000000000\n"))))
		return basic(req, c)
	}},
	{"influxdb-v1/write-u-p", classWrite, formInfluxV1, false, func(t *testing.T, base string, c creds) *http.Request {
		q := url.Values{"db": {"telegraf"}}
		if c.user != "" {
			q.Set("u", c.user)
			q.Set("p", c.password)
		}
		return newReq(t, "POST", base+"/write?"+q.Encode(), []byte("auth_cpu,host=b usage=2 1356998400000000000\n"))
	}},
	{"telegraf-influxdb_v2/write", classWrite, formInfluxV2, true, func(t *testing.T, base string, c creds) *http.Request {
		body := gzipped(t, []byte("auth_cpu,host=c usage=3 1356998400000000000\n"))
		return withToken(newReq(t, "POST", base+"/api/v2/write?bucket=b&org=o", body,
			"Content-Type", "text/plain; charset=utf-8", "Content-Encoding", "gzip", "User-Agent", "Telegraf/1.36.1 Go/1.24.5"), "Token", c)
	}},
	{"prometheus-remote_write/basic_auth", classWrite, formRemoteWrite, false, func(t *testing.T, base string, c creds) *http.Request {
		return basic(newReq(t, "POST", base+"/api/v1/write", remoteWriteBody(t), "Content-Type", "application/x-protobuf",
			"Content-Encoding", "snappy", "X-Prometheus-Remote-Write-Version", "0.1.0", "User-Agent", "Prometheus/3.10.0"), c)
	}},
	{"prometheus-remote_write/authorization", classWrite, formRemoteWrite, true, func(t *testing.T, base string, c creds) *http.Request {
		return withToken(newReq(t, "POST", base+"/api/v1/write", remoteWriteBody(t), "Content-Type", "application/x-protobuf",
			"Content-Encoding", "snappy", "X-Prometheus-Remote-Write-Version", "0.1.0", "User-Agent", "Prometheus/3.10.0"), "Bearer", c)
	}},
	{"admin/uid-assign", classAdmin, formOpenTSDB, false, func(t *testing.T, base string, c creds) *http.Request {
		body := fmt.Sprintf(`{"metric":["auth.assigned.%d"]}`, assignSeq.Add(1))
		return basic(newReq(t, "POST", base+"/api/uid/assign", []byte(body), "Content-Type", "application/json"), c)
	}},
	{"admin/dropcaches", classAdmin, formOpenTSDB, false, func(t *testing.T, base string, c creds) *http.Request {
		// DELETE: a GET that changes state is refused by browser safety.
		return basic(newReq(t, "DELETE", base+"/api/dropcaches", nil), c)
	}},
	{"admin/annotation-post", classAdmin, formOpenTSDB, true, func(t *testing.T, base string, c creds) *http.Request {
		body := `{"startTime":1356998400,"description":"deploy","tsuid":""}`
		return withToken(newReq(t, "POST", base+"/api/annotation", []byte(body), "Content-Type", "application/json"), "Bearer", c)
	}},
}

// doShape sends a shape's request and returns its status, headers and body.
func doShape(t *testing.T, s clientShape, base string, c creds) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(s.req(t, base, c))
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// checkErrorForm checks a refusal's body is in the protocol's own shape.
func checkErrorForm(t *testing.T, s clientShape, code int, body string) {
	t.Helper()
	var want string
	switch s.form {
	case formOpenTSDB:
		want = fmt.Sprintf(`{"error":{"code":%d,"message":`, code)
	case formProm:
		want = `{"status":"error","errorType":"unauthorized"`
		if code == 403 {
			want = `{"status":"error","errorType":"forbidden"`
		}
	case formInfluxV1:
		want = `{"error":"`
	case formInfluxV2:
		want = `{"code":"unauthorized"`
		if code == 403 {
			want = `{"code":"forbidden"`
		}
	case formRemoteWrite:
		want = "auth"
		if code == 403 {
			want = "user "
		}
	}
	if !strings.HasPrefix(body, want) {
		t.Errorf("%s: %d body %q, want it to start %q", s.name, code, body, want)
	}
}

// TestDaemonAuthRoles runs every client shape for every role against a
// daemon with a users file: no credentials and wrong ones are 401 with
// WWW-Authenticate, a role short of the route's is 403, both in the
// protocol's error form, and a covering role is served. The same shapes
// without credentials are served by a daemon without the file.
func TestDaemonAuthRoles(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.yaml")
	writeFileAtomic(t, users, usersYAML(t, authUsers...))
	d := startDaemon(t, "--data", filepath.Join(dir, "data"), "--tsd.auth.config", users)
	base := "http://" + d.Addr
	// Data for the queries, written by the admin.
	if code, _, body := doShape(t, clientShapes[4], base, creds{user: "admin", password: "a-pass"}); code/100 != 2 {
		t.Fatalf("admin put = %d %s", code, body)
	}
	type who struct {
		name string
		c    func(tok bool) creds
		role routeClass // highest class served; -1 none
		bad  bool       // credentials wrong rather than missing
	}
	userCreds := func(u authUser) func(bool) creds {
		return func(tok bool) creds {
			if tok {
				return creds{token: u.token}
			}
			return creds{user: u.name, password: u.password}
		}
	}
	whos := []who{
		{"anonymous", func(bool) creds { return creds{} }, -1, false},
		{"wrong", func(tok bool) creds {
			if tok {
				return creds{token: "nope"}
			}
			return creds{user: "writer", password: "nope"}
		}, -1, true},
		{"reader", userCreds(authUsers[0]), classRead, false},
		{"writer", userCreds(authUsers[1]), classWrite, false},
		{"admin", userCreds(authUsers[2]), classAdmin, false},
	}
	for _, w := range whos {
		for _, s := range clientShapes {
			code, hdr, body := doShape(t, s, base, w.c(s.token))
			switch {
			case w.role < 0:
				if code != 401 || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic realm=") {
					t.Errorf("%s %s = %d %q (WWW-Authenticate %q), want 401 with a challenge", w.name, s.name, code, body, hdr.Get("WWW-Authenticate"))
					continue
				}
				checkErrorForm(t, s, code, body)
			case s.class > w.role:
				if code != 403 {
					t.Errorf("%s %s = %d %q, want 403", w.name, s.name, code, body)
					continue
				}
				checkErrorForm(t, s, code, body)
			default:
				if code/100 != 2 {
					t.Errorf("%s %s = %d %q, want 2xx", w.name, s.name, code, body)
				}
			}
		}
	}
	// The audit log: refusals and admin actions, with user, client,
	// route and outcome.
	logs := d.Logs.String()
	for _, want := range []string{
		`level=WARN msg="audit: access denied" kind=auth.forbidden client=127.0.0.1 user=reader route=/api/put method=POST need=write outcome=forbidden`,
		`level=WARN msg="audit: access denied" kind=auth.missing_credentials client=127.0.0.1 user="" route=/api/suggest method=GET need=read outcome=missing_credentials`,
		`level=WARN msg="audit: access denied" kind=auth.bad_credentials client=127.0.0.1 user="" route=/api/suggest method=GET need=read outcome=bad_credentials`,
		`level=INFO msg="audit: admin action" kind=auth.admin client=127.0.0.1 user=admin route=/api/uid/assign method=POST need=admin outcome=allowed`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, grepLines(logs, "audit"))
		}
	}
	code, metrics := rawGetAuth(t, base+"/metrics", "reader", "r-pass")
	for _, want := range []string{`tsd_auth_failures_total{kind="missing_credentials"}`, `tsd_auth_failures_total{kind="forbidden"}`,
		`tsd_auth_failures_total{kind="bad_credentials"}`, "tsd_auth_admin_actions_total"} {
		if code != 200 || !strings.Contains(metrics, want) {
			t.Errorf("/metrics = %d, lacks %s", code, want)
		}
	}
	// Each anonymous and wrong request of the matrix is one failure.
	if m := regexp.MustCompile(`(?m)^tsd_auth_failures_total\{kind="missing_credentials"\} (\d+)$`).FindStringSubmatch(metrics); m == nil || m[1] != fmt.Sprint(len(clientShapes)) {
		t.Errorf("missing_credentials failures = %v, want %d", m, len(clientShapes))
	}

	// Without the users file every shape is served without credentials,
	// as before access control existed.
	plain := startDaemon(t, "--data", t.TempDir())
	pbase := "http://" + plain.Addr
	doShape(t, clientShapes[4], pbase, creds{}) // data for the query
	for _, s := range clientShapes {
		if code, _, body := doShape(t, s, pbase, creds{}); code/100 != 2 {
			t.Errorf("no users file: %s = %d %q, want 2xx", s.name, code, body)
		}
	}
}

func rawGetAuth(t *testing.T, u, user, password string) (int, string) {
	t.Helper()
	req := newReq(t, "GET", u, nil)
	req.SetBasicAuth(user, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDaemonAuthOpenPaths: tsd.auth.open_paths serves its exact paths
// without credentials, and nothing else.
func TestDaemonAuthOpenPaths(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.yaml")
	writeFileAtomic(t, users, usersYAML(t, authUsers...))
	d := startDaemon(t, "--data", filepath.Join(dir, "data"), "--tsd.auth.config", users,
		"--tsd.auth.open_paths", "/metrics,/api/version")
	for path, want := range map[string]int{"/metrics": 200, "/api/version": 200, "/api/v1/version": 401, "/api/stats": 401} {
		if code, body := d.Get(t, path); code != want {
			t.Errorf("GET %s = %d %q, want %d", path, code, body, want)
		}
	}
}

// authTelnet is a telnet connection to the daemon with a reader.
type authTelnet struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialAuthTelnet(t *testing.T, d *daemon) *authTelnet {
	c := dialDaemon(t, d)
	c.SetDeadline(time.Now().Add(connLiveness))
	return &authTelnet{t, c, bufio.NewReader(c)}
}

// say sends a line and returns the reply line, "" for none within wait.
func (s *authTelnet) say(line string, wait time.Duration) string {
	s.t.Helper()
	if _, err := io.WriteString(s.c, line+"\n"); err != nil {
		s.t.Fatalf("send %q: %v", line, err)
	}
	s.c.SetReadDeadline(time.Now().Add(wait))
	got, err := s.r.ReadString('\n')
	s.c.SetReadDeadline(time.Now().Add(connLiveness))
	if err != nil && got == "" {
		return ""
	}
	return got
}

// TestDaemonTelnetAuth: with a users file, a telnet connection answers
// only version and help until an auth line succeeds (OpenTSDB's
// AUTH_SUCCESS / AUTH_FAIL replies), each command needs its role, and
// the third failure closes the connection. tsd.auth.telnet_role lets
// collectors that cannot authenticate write.
func TestDaemonTelnetAuth(t *testing.T) {
	t.Parallel() // its own daemon
	dir := t.TempDir()
	users := filepath.Join(dir, "users.yaml")
	writeFileAtomic(t, users, usersYAML(t, authUsers...))
	d := startDaemon(t, "--data", filepath.Join(dir, "data"), "--tsd.auth.config", users)
	long := 10 * time.Second

	s := dialAuthTelnet(t, d)
	if got := s.say("version", long); !strings.HasPrefix(got, "tsd ") {
		t.Errorf("version before auth = %q", got)
	}
	s.r.ReadString('\n') // version's second line
	if got := s.say("help", long); !strings.HasPrefix(got, "available commands:") {
		t.Errorf("help before auth = %q", got)
	}
	if got := s.say("put auth.tel 1356998400 1 host=a", long); got != "auth: authentication required\n" {
		t.Errorf("put before auth = %q", got)
	}
	if got := s.say("auth basic writer wrong", long); got != "AUTH_FAIL\r\n" {
		t.Errorf("bad auth = %q", got)
	}
	if got := s.say("auth basic writer w-pass", long); got != "AUTH_SUCCESS\r\n" {
		t.Errorf("auth basic = %q", got)
	}
	if got := s.say("put auth.tel 1356998400 1 host=a", 300*time.Millisecond); got != "" {
		t.Errorf("put after auth answered %q", got)
	}
	if got := s.say("dropcaches", long); !strings.HasPrefix(got, "auth: permission denied: dropcaches needs role admin; user writer has role write") {
		t.Errorf("writer dropcaches = %q", got)
	}

	// A read token: stats yes, put no.
	s = dialAuthTelnet(t, d)
	if got := s.say("auth token r-token", long); got != "AUTH_SUCCESS\r\n" {
		t.Errorf("auth token = %q", got)
	}
	if got := s.say("put auth.tel 1356998401 1 host=a", long); !strings.HasPrefix(got, "auth: permission denied: put needs role write") {
		t.Errorf("reader put = %q", got)
	}
	if got := s.say("stats", long); !strings.HasPrefix(got, "tsd.") {
		t.Errorf("reader stats = %q", got)
	}

	// Three failures close the connection.
	s = dialAuthTelnet(t, d)
	for i, line := range []string{"auth basic admin x", "put auth.tel 1356998402 1 host=a", "auth token x"} {
		want := "AUTH_FAIL\r\n"
		if i == 1 {
			want = "auth: authentication required\n"
		}
		if got := s.say(line, long); got != want {
			t.Errorf("failure %d: %q, want %q", i+1, got, want)
		}
	}
	s.c.SetReadDeadline(time.Now().Add(long))
	if n, err := s.r.ReadByte(); err != io.EOF {
		t.Errorf("after three failures read %q, %v; want EOF", n, err)
	}

	// The writer's point landed; the refused ones did not.
	code, body := rawGetAuth(t, "http://"+d.Addr+"/api/query?start=1356998000&end=1356999000&m=sum:auth.tel", "reader", "r-pass")
	if code != 200 || !strings.Contains(body, `"1356998400":1`) || strings.Contains(body, `"1356998401"`) || strings.Contains(body, `"1356998402"`) {
		t.Errorf("query = %d %s", code, body)
	}

	// tsd.auth.telnet_role=write: tcollector's unauthenticated puts land.
	d2 := startDaemon(t, "--data", filepath.Join(dir, "data2"), "--tsd.auth.config", users, "--tsd.auth.telnet_role", "write")
	s = dialAuthTelnet(t, d2)
	if got := s.say("put auth.tc 1356998400 1 host=a", 300*time.Millisecond); got != "" {
		t.Errorf("telnet_role=write put answered %q", got)
	}
	if got := s.say("dropcaches", long); !strings.HasPrefix(got, "auth: permission denied: dropcaches needs role admin") {
		t.Errorf("telnet_role=write dropcaches = %q", got)
	}
}

// TestDaemonAuthReload: a changed users file is in force without a
// restart; a broken one keeps the users in force and logs ERROR; SIGHUP
// reloads at once.
func TestDaemonAuthReload(t *testing.T) {
	t.Parallel() // waits for the users file to be read again
	dir := t.TempDir()
	users := filepath.Join(dir, "users.yaml")
	writeFileAtomic(t, users, usersYAML(t, authUsers[0]))
	d := startDaemon(t, "--data", filepath.Join(dir, "data"), "--tsd.auth.config", users)
	base := "http://" + d.Addr
	if code, _ := rawGetAuth(t, base+"/api/version", "writer", "w-pass"); code != 401 {
		t.Fatalf("writer before the reload = %d, want 401", code)
	}
	writeFileAtomic(t, users, usersYAML(t, authUsers[0], authUsers[1]))
	eventually(t, "the new user works", func() bool {
		code, _ := rawGetAuth(t, base+"/api/version", "writer", "w-pass")
		return code == 200
	})
	writeFileAtomic(t, users, "users:\n  - name: writer\n    role: writer\n    password_bcrypt: x\n")
	eventually(t, "the broken file is logged", func() bool {
		return strings.Contains(d.Logs.String(), `level=ERROR msg="auth: users file does not load; keeping the users in force"`)
	})
	if !strings.Contains(d.Logs.String(), `users entry 1 (name \"writer\"): role: \"writer\": want read, write or admin`) {
		t.Errorf("the error does not name the entry and field:\n%s", grepLines(d.Logs.String(), "users file"))
	}
	for _, u := range authUsers[:2] {
		if code, _ := rawGetAuth(t, base+"/api/version", u.name, u.password); code != 200 {
			t.Errorf("%s after the broken file = %d, want 200", u.name, code)
		}
	}
	// SIGHUP reloads now, even a file whose bytes did not change.
	writeFileAtomic(t, users, usersYAML(t, authUsers...))
	eventually(t, "the admin works", func() bool {
		code, _ := rawGetAuth(t, base+"/api/version", "admin", "a-pass")
		return code == 200
	})
	before := strings.Count(d.Logs.String(), `msg="auth: users file loaded"`)
	if err := d.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "SIGHUP reloads", func() bool {
		return strings.Count(d.Logs.String(), `msg="auth: users file loaded"`) > before
	})
}

// TestDaemonAuthBadFile: a users file that does not load stops the start
// with an error naming the entry and field.
func TestDaemonAuthBadFile(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.yaml")
	writeFileAtomic(t, users, "users:\n  - name: a\n    role: read\n    token_sha256: ABC\n")
	var out bytes.Buffer
	code := run([]string{"--data", filepath.Join(dir, "data"), "--port", "0", "--tsd.network.bind", "127.0.0.1",
		"--tsd.auth.config", users}, io.Discard, &out, func(string) string { return "" })
	if code != exitFailed || !strings.Contains(out.String(), `users entry 1 (name \"a\"): token_sha256: want 64 lowercase hex digits`) {
		t.Errorf("run = %d\n%s", code, out.String())
	}
}

// TestDaemonAuthClientCert: over TLS with a client CA, a verified client
// certificate whose CN is a user acts as that user, on HTTP and telnet,
// without other credentials; credentials sent with it win; a certificate
// naming no user is anonymous.
func TestDaemonAuthClientCert(t *testing.T) {
	dir := t.TempDir()
	ca, clients := newTestCA(t, "server CA"), newTestCA(t, "client CA")
	users := filepath.Join(dir, "users.yaml")
	writeFileAtomic(t, users, usersYAML(t, append([]authUser{{"collector-1", "write", "c-pass", "c-token"}}, authUsers...)...))
	args := append(serverCert(t, ca, dir, "tsd"), "--data", filepath.Join(dir, "data"),
		"--tsd.network.tls.client_ca_file="+writeFile(t, dir, "clients.pem", clients.pem),
		"--tsd.auth.config", users)
	d := startDaemon(t, args...)
	certOf := func(cn string) tls.Certificate {
		c, k := clients.issue(t, cn, false)
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return pair
	}
	collector, stranger := tlsClient(ca, certOf("collector-1")), tlsClient(ca, certOf("collector-2"))
	base := "https://" + d.Addr
	put := `[{"metric":"auth.cert","timestamp":1356998400,"value":1,"tags":{"host":"a"}}]`
	if code, body := doReq(t, httpsClient(collector), "POST", base+"/api/put", put); code != 204 {
		t.Errorf("put with collector-1's certificate = %d %s, want 204", code, body)
	}
	if code, body := doReq(t, httpsClient(collector), "DELETE", base+"/api/dropcaches", ""); code != 403 ||
		!strings.Contains(body, "user collector-1 has role write") {
		t.Errorf("dropcaches with collector-1's certificate = %d %s, want 403", code, body)
	}
	req, _ := http.NewRequest("DELETE", base+"/api/dropcaches", nil)
	req.SetBasicAuth("admin", "a-pass")
	if resp, err := httpsClient(collector).Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("dropcaches as admin beside the certificate = %v %v, want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	if code, body := doReq(t, httpsClient(stranger), "POST", base+"/api/put", put); code != 401 {
		t.Errorf("put with collector-2's certificate (no such user) = %d %s, want 401", code, body)
	}

	telnetOver := func(cfg *tls.Config) *authTelnet {
		c, err := tls.Dial("tcp", d.Addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(connLiveness))
		return &authTelnet{t, c, bufio.NewReader(c)}
	}
	s := telnetOver(collector)
	if got := s.say("put auth.cert 1356998401 2 host=a", 300*time.Millisecond); got != "" {
		t.Errorf("telnet put with collector-1's certificate answered %q", got)
	}
	if got := s.say("dropcaches", 10*time.Second); !strings.HasPrefix(got, "auth: permission denied: dropcaches needs role admin; user collector-1 has role write") {
		t.Errorf("telnet dropcaches with collector-1's certificate = %q", got)
	}
	s = telnetOver(stranger)
	if got := s.say("put auth.cert 1356998402 3 host=a", 10*time.Second); got != "auth: authentication required\n" {
		t.Errorf("telnet put with collector-2's certificate = %q", got)
	}
	code, body := doReq(t, httpsClient(collector), "GET", base+"/api/query?start=1356998000&end=1356999000&m=sum:auth.cert", "")
	if code != 200 || !strings.Contains(body, `"1356998400":1`) || !strings.Contains(body, `"1356998401":2`) || strings.Contains(body, `"1356998402"`) {
		t.Errorf("query = %d %s", code, body)
	}
}
