package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serialSeq int64 = 1

func nextSerial() *big.Int { serialSeq++; return big.NewInt(serialSeq) }

func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a leaf certificate for cn (a server one for 127.0.0.1 when
// server) and returns its certificate and key PEM.
func (ca *testCA) issue(t *testing.T, cn string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// writeFile writes b to dir/name through a rename, as a certificate
// manager replaces a file, and returns the path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	return p
}

// serverCert writes a fresh server certificate from ca to dir and returns
// the flags naming it.
func serverCert(t *testing.T, ca *testCA, dir, cn string) []string {
	c, k := ca.issue(t, cn, true)
	return []string{"--tsd.network.tls.cert_file=" + writeFile(t, dir, "server.pem", c),
		"--tsd.network.tls.key_file=" + writeFile(t, dir, "server.key", k)}
}

func tlsClient(ca *testCA, certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: ca.pool(), Certificates: certs, MinVersion: tls.VersionTLS12}
}

func httpsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func doReq(t *testing.T, c *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// servedCN dials the daemon over TLS and returns the CN of the leaf it
// serves.
func servedCN(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: connLiveness}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestDaemonTLS: through the real binary, on the one port: HTTPS put and
// query, telnet put and version over TLS, plaintext still served beside
// them, a ClientHello stalled half-way closed by
// tsd.network.read_header_timeout, and a replaced certificate served
// without a restart once the daemon polls the files.
func TestDaemonTLS(t *testing.T) {
	t.Parallel() // its own daemon
	dir := t.TempDir()
	ca := newTestCA(t, "tsd test CA")
	args := append(serverCert(t, ca, dir, "tsd-one"), "--data", t.TempDir(),
		"--tsd.network.read_header_timeout=1s", "--tsd.network.tls.reload_interval=100ms")
	d := startDaemon(t, args...)
	base := "https://" + d.Addr
	hc := httpsClient(tlsClient(ca))

	if code, body := doReq(t, hc, "POST", base+"/api/put?sync",
		`{"metric":"tls.put","timestamp":1356998400,"value":7,"tags":{"host":"a"}}`); code != 204 {
		t.Fatalf("HTTPS /api/put = %d %s", code, body)
	}
	code, body := doReq(t, hc, "GET", base+"/api/query?start=1356998000&end=1356999000&m=sum:tls.put", "")
	if code != 200 || !strings.Contains(body, `"1356998400":7`) {
		t.Fatalf("HTTPS /api/query = %d %s", code, body)
	}
	if code, body := d.Get(t, "/api/version"); code != 200 {
		t.Errorf("plaintext /api/version beside TLS = %d %s", code, body)
	}

	tc, err := tls.Dial("tcp", d.Addr, tlsClient(ca))
	if err != nil {
		t.Fatal(err)
	}
	tc.SetDeadline(time.Now().Add(connLiveness))
	io.WriteString(tc, "put tls.telnet 1356998400 3 host=b\nversion\n")
	line, err := bufio.NewReader(tc).ReadString('\n')
	tc.Close()
	if err != nil || !strings.HasPrefix(line, "tsd ") {
		t.Fatalf("telnet over TLS: version line %q, %v", line, err)
	}
	code, body = doReq(t, hc, "GET", base+"/api/query?start=1356998000&end=1356999000&m=sum:tls.telnet", "")
	if code != 200 || !strings.Contains(body, `"1356998400":3`) {
		t.Errorf("query of the telnet-over-TLS point = %d %s", code, body)
	}

	// A ClientHello's record header and a few bytes, then nothing. The
	// clock starts before the dial: the server's starts at its accept.
	start := time.Now()
	stalled := dialDaemon(t, d)
	stalled.Write([]byte{0x16, 0x03, 0x01, 0x01, 0x00, 0x01, 0x00, 0x00})
	if got, after := awaitClose(t, stalled, start); got != "" || after < time.Second {
		t.Errorf("stalled handshake: read %q, closed after %v; want a close after 1s", got, after)
	}

	if cn := servedCN(t, d.Addr, tlsClient(ca)); cn != "tsd-one" {
		t.Fatalf("served CN %q, want tsd-one", cn)
	}
	serverCert(t, ca, dir, "tsd-two")
	deadline := time.Now().Add(connLiveness)
	for servedCN(t, d.Addr, tlsClient(ca)) != "tsd-two" {
		if time.Now().After(deadline) {
			t.Fatalf("replaced certificate not served within %v:\n%s", connLiveness, d.Logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	body = metricsOnceServed(t, d)
	for _, want := range []string{"tsd_connections_tls_handshake_failures_total 1\n",
		`tsd_connections_timeouts_total{deadline="read_header"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(body, "tsd_connections"))
		}
	}
}

// TestDaemonTLSRequiredClientCerts: with a client CA and
// tsd.network.tls.required, a client certificate from that CA is served,
// none or one from another CA is refused in the handshake, plaintext HTTP
// is answered 400 naming the key and plaintext telnet gets one line and
// is closed; SIGHUP serves a replaced certificate, and a broken one keeps
// the old with an ERROR line.
func TestDaemonTLSRequiredClientCerts(t *testing.T) {
	dir := t.TempDir()
	ca, clients, other := newTestCA(t, "server CA"), newTestCA(t, "client CA"), newTestCA(t, "other CA")
	args := append(serverCert(t, ca, dir, "tsd-one"), "--data", t.TempDir(),
		"--tsd.network.tls.client_ca_file="+writeFile(t, dir, "clients.pem", clients.pem),
		"--tsd.network.tls.required=true", "--tsd.network.tls.reload_interval=0")
	d := startDaemon(t, args...)
	certOf := func(ca *testCA) tls.Certificate {
		c, k := ca.issue(t, "collector-1", false)
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return pair
	}
	base := "https://" + d.Addr + "/api/version"
	if code, body := doReq(t, httpsClient(tlsClient(ca, certOf(clients))), "GET", base, ""); code != 200 {
		t.Errorf("HTTPS with a client certificate = %d %s", code, body)
	}
	for name, cfg := range map[string]*tls.Config{"none": tlsClient(ca), "other CA": tlsClient(ca, certOf(other))} {
		req, _ := http.NewRequest("GET", base, nil)
		if resp, err := httpsClient(cfg).Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("client certificate %s: served %d, want a failed handshake", name, resp.StatusCode)
		}
	}

	code, body := d.Get(t, "/api/version")
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Details string `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e); code != 400 || e.Error.Code != 400 ||
		!strings.Contains(e.Error.Details, "tsd.network.tls.required") {
		t.Errorf("plaintext HTTP = %d %s, want 400 naming tsd.network.tls.required", code, body)
	}
	plain := dialDaemon(t, d)
	io.WriteString(plain, "version\n")
	got, _ := awaitClose(t, plain, time.Now())
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "tsd.network.tls.required") {
		t.Errorf("plaintext telnet got %q, want one line naming tsd.network.tls.required", got)
	}

	client := tlsClient(ca, certOf(clients))
	serverCert(t, ca, dir, "tsd-two")
	time.Sleep(300 * time.Millisecond)
	if cn := servedCN(t, d.Addr, client); cn != "tsd-one" {
		t.Fatalf("served %q before SIGHUP with reload_interval=0", cn)
	}
	d.Cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(connLiveness)
	for servedCN(t, d.Addr, client) != "tsd-two" {
		if time.Now().After(deadline) {
			t.Fatalf("certificate not reloaded on SIGHUP:\n%s", d.Logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	writeFile(t, dir, "server.pem", []byte("not a certificate"))
	d.Cmd.Process.Signal(syscall.SIGHUP)
	for !strings.Contains(d.Logs.String(), "TLS certificates not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no ERROR line for a broken certificate:\n%s", d.Logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !bytes.Contains([]byte(grepLines(d.Logs.String(), "TLS certificates not reloaded")), []byte("level=ERROR")) {
		t.Errorf("broken certificate not logged at ERROR:\n%s", d.Logs)
	}
	if cn := servedCN(t, d.Addr, client); cn != "tsd-two" {
		t.Errorf("after a broken certificate, served %q, want the previous tsd-two", cn)
	}
}
