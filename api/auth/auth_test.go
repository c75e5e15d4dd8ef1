package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func hashOf(t *testing.T, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func tokenHash(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}

func newAuth(t *testing.T, yaml string) (*Authenticator, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Path: path, PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, path
}

// TestParseUsersErrors: every invalid entry is refused with the entry's
// position and name and the field at fault.
func TestParseUsersErrors(t *testing.T) {
	good := tokenHash("t")
	for _, tc := range []struct{ yaml, want string }{
		{"", "no users"},
		{"users: []", "no users"},
		{"users:\n  - name: a\n    role: read\n", `users entry 1 (name "a"): password_bcrypt or token_sha256: missing`},
		{"users:\n  - role: read\n    token_sha256: " + good + "\n", `users entry 1 (name ""): name: missing`},
		{"users:\n  - name: a b\n    role: read\n    token_sha256: " + good + "\n", `name: must not hold`},
		{"users:\n  - name: a\n    token_sha256: " + good + "\n", `users entry 1 (name "a"): role: missing`},
		{"users:\n  - name: a\n    role: root\n    token_sha256: " + good + "\n", `role: "root": want read, write or admin`},
		{"users:\n  - name: a\n    role: none\n    token_sha256: " + good + "\n", `role: "none"`},
		{"users:\n  - name: a\n    role: read\n    token_sha256: " + strings.ToUpper(good) + "\n", `token_sha256: want 64 lowercase hex`},
		{"users:\n  - name: a\n    role: read\n    token_sha256: abc\n", `token_sha256: want 64 lowercase hex`},
		{"users:\n  - name: a\n    role: read\n    password_bcrypt: secret\n", `password_bcrypt: not a bcrypt hash`},
		{"users:\n  - name: a\n    role: read\n    token: x\n", `field token not found`},
		{"users:\n  - name: a\n    role: read\n    token_sha256: " + good + "\n  - name: a\n    role: admin\n    token_sha256: " + good + "\n",
			`users entry 2 (name "a"): name: listed twice`},
	} {
		_, err := parseUsers([]byte(tc.yaml))
		if !errors.Is(err, ErrInvalidFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// TestBasicAndToken: passwords and tokens map to their user's role,
// anything else is ErrBadCredentials; a second check of the same
// password costs no bcrypt.
func TestBasicAndToken(t *testing.T) {
	a, _ := newAuth(t, fmt.Sprintf("users:\n  - name: w\n    password_bcrypt: %q\n    role: write\n  - name: t\n    token_sha256: %s\n    role: admin\n",
		hashOf(t, "pw"), tokenHash("tok")))
	if id, err := a.Basic("w", "pw"); err != nil || id != (Identity{"w", Write}) {
		t.Errorf("Basic(w, pw) = %v, %v", id, err)
	}
	for _, c := range [][2]string{{"w", "nope"}, {"nobody", "pw"}, {"t", ""}, {"w", ""}} {
		if _, err := a.Basic(c[0], c[1]); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("Basic(%q, %q) = %v", c[0], c[1], err)
		}
	}
	if id, err := a.Token("tok"); err != nil || id != (Identity{"t", Admin}) {
		t.Errorf("Token(tok) = %v, %v", id, err)
	}
	if _, err := a.Token("pw"); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("Token(pw) = %v", err)
	}
	before := a.Stats().BcryptChecks.Load()
	for range 100 {
		if _, err := a.Basic("w", "pw"); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.Stats().BcryptChecks.Load() - before; n != 0 {
		t.Errorf("100 repeated checks ran bcrypt %d times, want 0 (cached)", n)
	}
}

// TestCacheBounded: the cache never holds more than CacheSize outcomes.
func TestCacheBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf("users:\n  - name: w\n    password_bcrypt: %q\n    role: write\n", hashOf(t, "pw"))), 0o600)
	a, err := New(Options{Path: path, PollInterval: -1, CacheSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i := range 40 {
		a.Basic("w", fmt.Sprint("guess", i))
	}
	if n := len(a.cache); n > 8 {
		t.Errorf("cache holds %d outcomes, bound 8", n)
	}
}

// TestReload: a good file replaces the users, a bad one keeps them; the
// watcher notices a change on its own.
func TestReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.yaml")
	write := func(s string) {
		if err := os.WriteFile(path+".tmp", []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Rename(path+".tmp", path)
	}
	write(fmt.Sprintf("users:\n  - name: a\n    token_sha256: %s\n    role: read\n", tokenHash("A")))
	a, err := New(Options{Path: path, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	write(fmt.Sprintf("users:\n  - name: b\n    token_sha256: %s\n    role: write\n", tokenHash("B")))
	deadline := time.Now().Add(10 * time.Second)
	for _, err := a.Token("B"); err != nil; _, err = a.Token("B") {
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not load the new file")
		}
		time.Sleep(5 * time.Millisecond)
	}
	write("users:\n  - name: c\n    role: read\n")
	if err := a.Reload(); !errors.Is(err, ErrInvalidFile) {
		t.Errorf("Reload of a bad file = %v", err)
	}
	if _, err := a.Token("B"); err != nil {
		t.Errorf("after a bad file the users in force are gone: %v", err)
	}
	if a.Stats().ReloadErrors.Load() < 1 || a.Stats().Reloads.Load() < 1 {
		t.Errorf("reloads %d, errors %d", a.Stats().Reloads.Load(), a.Stats().ReloadErrors.Load())
	}
}

// testCA makes a CA and a client certificate it signs for cn.
func testCA(t *testing.T, cn string) (*x509.CertPool, tls.Certificate, tls.Certificate) {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(cn string, usage x509.ExtKeyUsage, ip bool) tls.Certificate {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature}
		if ip {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, leaf("tsd", x509.ExtKeyUsageServerAuth, true), leaf(cn, x509.ExtKeyUsageClientAuth, false)
}

// handshake runs a real TLS handshake on loopback and returns the
// server side's state.
func handshake(t *testing.T, server *tls.Config, client *tls.Config) *tls.ConnectionState {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan *tls.ConnectionState, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if tc.Handshake() != nil {
			got <- nil
			return
		}
		cs := tc.ConnectionState()
		got <- &cs
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cs := <-got
	if cs == nil {
		t.Fatal("server handshake failed")
	}
	return cs
}

// TestCert: a verified client certificate names its user by CN; an
// unverified one, or a CN that is no user, names no one.
func TestCert(t *testing.T) {
	a, _ := newAuth(t, fmt.Sprintf("users:\n  - name: collector\n    token_sha256: %s\n    role: write\n", tokenHash("x")))
	pool, serverCert, clientCert := testCA(t, "collector")
	client := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}, ServerName: "127.0.0.1"}

	cs := handshake(t, &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert}, client)
	if id, ok := a.Cert(cs); !ok || id != (Identity{"collector", Write}) {
		t.Errorf("verified cert = %v %v", id, ok)
	}
	// Requested but not verified: the CN proves nothing.
	cs = handshake(t, &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequestClientCert}, client)
	if id, ok := a.Cert(cs); ok {
		t.Errorf("unverified cert = %v, want no one", id)
	}
	pool2, serverCert2, strangerCert := testCA(t, "stranger")
	cs = handshake(t, &tls.Config{Certificates: []tls.Certificate{serverCert2}, ClientCAs: pool2,
		ClientAuth: tls.RequireAndVerifyClientCert}, &tls.Config{RootCAs: pool2, Certificates: []tls.Certificate{strangerCert}, ServerName: "127.0.0.1"})
	if id, ok := a.Cert(cs); ok {
		t.Errorf("cert of no user = %v", id)
	}
	if _, ok := a.Cert(nil); ok {
		t.Error("nil state names a user")
	}
}

// TestOperationsDocExample: the example users file in docs/operations.md
// loads, and its passwords and tokens are those the doc names.
func TestOperationsDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(doc), "```yaml\n# /etc/tsd/users.yaml")
	_, rest, ok := strings.Cut(string(doc)[max(i, 0):], "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/operations.md has no example users file")
	}
	a, _ := newAuth(t, example)
	for _, c := range []struct {
		user, password string
		role           Role
	}{{"grafana", "grafana-password", Read}, {"telegraf", "telegraf-password", Write}, {"ops", "ops-password", Admin}} {
		if id, err := a.Basic(c.user, c.password); err != nil || id.Role != c.role {
			t.Errorf("%s: %v %v", c.user, id, err)
		}
	}
	for token, user := range map[string]string{"collectors-token": "collectors", "host-17-token": "host-17.example", "ops-token": "ops"} {
		if id, err := a.Token(token); err != nil || id.User != user {
			t.Errorf("token %s: %v %v", token, id, err)
		}
	}
}
