package api

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// issueCert returns a certificate for cn signed by parent (self-signed,
// a CA, when parent is nil) and its key, and the PEM of both.
func issueCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, serial int64) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalECPrivateKey(key)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

type telnetFunc func(net.Conn)

func (f telnetFunc) ServeConn(c net.Conn) { f(c) }

// TestTLSClientCertificateAccessors: the verified client certificate of
// a TLS connection reaches the telnet handler (ConnTLSState) and an HTTP
// handler (RequestTLSState), through ClientCertificate, and a plaintext
// one has none.
func TestTLSClientCertificateAccessors(t *testing.T) {
	dir := t.TempDir()
	ca, caKey, caPEM, _ := issueCert(t, "CA", nil, nil, 1)
	_, _, srvPEM, srvKey := issueCert(t, "server", ca, caKey, 2)
	_, _, cliPEM, cliKey := issueCert(t, "collector-7", ca, caKey, 3)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cnOf := func(st *tls.ConnectionState) string {
		if c := ClientCertificate(st); c != nil {
			return c.Subject.CommonName
		}
		return "none"
	}
	s, err := New(Options{Addr: "127.0.0.1:0", Logger: quietLog(),
		TLS: TLSOptions{CertFile: write("s.pem", srvPEM), KeyFile: write("s.key", srvKey), ClientCAFile: write("ca.pem", caPEM)},
		Telnet: telnetFunc(func(c net.Conn) {
			bufio.NewReader(c).ReadString('\n')
			io.WriteString(c, cnOf(ConnTLSState(c))+"\n")
		})})
	if err != nil {
		t.Fatal(err)
	}
	s.routes.paths["/whoami"] = endpoint{name: "/whoami", handle: func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString(cnOf(RequestTLSState(ctx)))
	}}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	defer func() {
		s.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	}()
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	pair, err := tls.X509KeyPair(cliPEM, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}
	addr := ln.Addr().String()

	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "who\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "collector-7\n" {
		t.Errorf("telnet over TLS: %q, %v; want collector-7", line, err)
	}
	c.Close()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	resp, err := hc.Get("https://" + addr + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "collector-7" {
		t.Errorf("HTTPS: %q, want collector-7", b)
	}
	resp, err = http.Get("http://" + addr + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "none" {
		t.Errorf("plaintext HTTP: %q, want none", b)
	}
}

// TestTLSWriteDeadline: a TLS session's writes go through the tracked
// conn, so a TLS client that stops reading is closed by WriteTimeout as a
// plaintext one is, and counted.
func TestTLSWriteDeadline(t *testing.T) {
	t.Parallel() // waits out a timeout: overlap it with the others that do
	dir := t.TempDir()
	ca, caKey, _, _ := issueCert(t, "CA", nil, nil, 1)
	_, _, srvPEM, srvKey := issueCert(t, "server", ca, caKey, 2)
	certFile, keyFile := filepath.Join(dir, "s.pem"), filepath.Join(dir, "s.key")
	os.WriteFile(certFile, srvPEM, 0o600)
	os.WriteFile(keyFile, srvKey, 0o600)
	served := make(chan error, 1)
	s, base := startServer(t, Options{WriteTimeout: time.Second, TLS: TLSOptions{CertFile: certFile, KeyFile: keyFile},
		Telnet: telnetFunc(func(c net.Conn) {
			bufio.NewReader(c).ReadString('\n')
			buf := make([]byte, 64<<10)
			for {
				if _, err := c.Write(buf); err != nil {
					served <- err
					return
				}
			}
		})})
	raw := dialSmallWindow(t, strings.TrimPrefix(base, "http://"))
	defer raw.Close()
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	c := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	c.SetDeadline(time.Now().Add(30 * time.Second)) // liveness only
	if _, err := io.WriteString(c, "flood\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if !isTimeout(err) {
			t.Errorf("the handler's write failed with %v, want the write deadline", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a TLS client reading nothing was not closed by the write timeout")
	}
	if n := s.AnswerStats().WriteTimeouts; n != 1 {
		t.Errorf("%d write timeouts counted, want 1", n)
	}
}
