package api

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// tlsHandshakeByte is the first byte of a TLS record carrying a handshake
// message, so of every ClientHello. Neither telnet commands nor HTTP
// methods start with it.
const tlsHandshakeByte = 0x16

// DefaultTLSReloadInterval is TLSOptions.ReloadInterval's default.
const DefaultTLSReloadInterval = 10 * time.Second

// TLSOptions configure TLS on the one port. With CertFile empty (the
// default) TLS is off: a connection starting with a TLS record is logged
// and closed.
type TLSOptions struct {
	// CertFile and KeyFile are the PEM server certificate (chain) and its
	// key (tsd.network.tls.cert_file, key_file). Both or neither.
	CertFile, KeyFile string
	// ClientCAFile, when set, is a PEM bundle of the CAs a client
	// certificate must chain to; every TLS client must then present one
	// (tsd.network.tls.client_ca_file). Default empty: none asked for.
	ClientCAFile string
	// Required refuses plaintext: an HTTP request is answered 400 naming
	// tsd.network.tls.required, a telnet connection gets one error line
	// and is closed. Needs CertFile.
	Required bool
	// ReloadInterval is how often the three files are read again; when
	// their contents changed, the new certificates serve new handshakes
	// (Server.Reload does the same at once). Default 10 s; negative:
	// only Reload.
	ReloadInterval time.Duration
}

func (o *TLSOptions) enabled() bool { return o.CertFile != "" }

func (o *TLSOptions) ensureDefaults() {
	if o.ReloadInterval == 0 {
		o.ReloadInterval = DefaultTLSReloadInterval
	}
}

func (o *TLSOptions) validate() error {
	switch {
	case (o.CertFile == "") != (o.KeyFile == ""):
		return errors.New("api: TLS needs both CertFile and KeyFile (tsd.network.tls.cert_file, tsd.network.tls.key_file)")
	case o.ClientCAFile != "" && !o.enabled():
		return errors.New("api: TLS ClientCAFile (tsd.network.tls.client_ca_file) needs CertFile and KeyFile")
	case o.Required && !o.enabled():
		return errors.New("api: TLS Required (tsd.network.tls.required) needs CertFile and KeyFile")
	}
	return nil
}

// tlsLoaded is one generation of the certificates: the config new
// handshakes use and the file contents it was made from.
type tlsLoaded struct {
	cfg   *tls.Config
	files [3][]byte // cert, key, client CA
}

// tlsCerts holds the current certificates and reloads them.
type tlsCerts struct {
	opts TLSOptions
	log  *slog.Logger
	base *tls.Config // what tls.Server gets: hands out cur's config
	cur  atomic.Pointer[tlsLoaded]
	mu   sync.Mutex // serialises reloads

	stop chan struct{}
	done chan struct{}
}

// newTLSCerts loads the certificates once; a failure here is a start-up
// error, a failure in a later reload keeps the old ones.
func newTLSCerts(opts TLSOptions, log *slog.Logger) (*tlsCerts, error) {
	t := &tlsCerts{opts: opts, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	l, err := t.load()
	if err != nil {
		return nil, err
	}
	t.cur.Store(l)
	t.base = &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return t.cur.Load().cfg, nil
		},
	}
	return t, nil
}

// readFiles reads the cert, key and client CA files.
func (t *tlsCerts) readFiles() (files [3][]byte, err error) {
	for i, name := range []string{t.opts.CertFile, t.opts.KeyFile, t.opts.ClientCAFile} {
		if name == "" {
			continue
		}
		if files[i], err = os.ReadFile(name); err != nil {
			return files, fmt.Errorf("api: TLS: %w", err)
		}
	}
	return files, nil
}

// load reads the files and makes a config from them.
func (t *tlsCerts) load() (*tlsLoaded, error) {
	files, err := t.readFiles()
	if err != nil {
		return nil, err
	}
	return makeTLS(t.opts, files)
}

func makeTLS(opts TLSOptions, files [3][]byte) (*tlsLoaded, error) {
	cert, err := tls.X509KeyPair(files[0], files[1])
	if err != nil {
		return nil, fmt.Errorf("api: TLS certificate %s and key %s: %w", opts.CertFile, opts.KeyFile, err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if opts.ClientCAFile != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(files[2]) {
			return nil, fmt.Errorf("api: TLS client CA file %s holds no PEM certificate", opts.ClientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return &tlsLoaded{cfg: cfg, files: files}, nil
}

// reload reads the files again and, when they changed and make a valid
// config, serves new handshakes with it. It reports whether the
// certificates changed; on an error the old ones stay.
func (t *tlsCerts) reload() (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	files, err := t.readFiles()
	if err == nil && sameFiles(files, t.cur.Load().files) {
		return false, nil
	}
	var l *tlsLoaded
	if err == nil {
		l, err = makeTLS(t.opts, files)
	}
	if err != nil {
		t.log.Error("TLS certificates not reloaded; serving the previous ones", "err", err)
		return false, err
	}
	t.cur.Store(l)
	t.log.Info("TLS certificates reloaded", "cert_file", t.opts.CertFile)
	return true, nil
}

func sameFiles(a, b [3][]byte) bool {
	return bytes.Equal(a[0], b[0]) && bytes.Equal(a[1], b[1]) && bytes.Equal(a[2], b[2])
}

// run polls the files every ReloadInterval until stopCerts; Server.Close
// stops it.
func (t *tlsCerts) run() {
	defer close(t.done)
	if t.opts.ReloadInterval < 0 {
		<-t.stop
		return
	}
	tick := time.NewTicker(t.opts.ReloadInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.reload() // an error is logged and keeps the old certificates
		}
	}
}

func (t *tlsCerts) close() {
	close(t.stop)
	<-t.done
}

// Reload reads the TLS certificate, key and client CA files again (the
// daemon calls it on SIGHUP; the server also polls them every
// TLSOptions.ReloadInterval). New handshakes use the new certificates;
// established connections keep theirs. A file that cannot be read or
// does not make a valid certificate keeps the old ones, logs an ERROR
// line and is returned. Without TLS it does nothing.
func (s *Server) Reload() error {
	if s.certs == nil {
		return nil
	}
	_, err := s.certs.reload()
	return err
}

// tlsConn is a TLS session on a tracked conn. Like conn, its first Read
// replays the byte that told HTTP from telnet inside the session; for
// telnet it ends the connection's head at the first '\n' of plaintext
// (the conn below sees only ciphertext).
type tlsConn struct {
	*tls.Conn
	c          *conn
	first      byte
	replay     bool
	telnetHead bool
}

func (t *tlsConn) Read(p []byte) (int, error) {
	var n int
	var err error
	if t.replay && len(p) > 0 {
		p[0], t.replay = t.first, false
		n = 1
	} else {
		n, err = t.Conn.Read(p)
	}
	if t.telnetHead && bytes.IndexByte(p[:n], '\n') >= 0 {
		t.telnetHead = false
		t.c.endHead()
	}
	return n, err
}

// startTLS runs the server side of a TLS handshake on c, whose first
// byte (replayed) began a ClientHello, and reads the first byte of
// plaintext. Both run under c's head deadline, so a stalled handshake is
// closed by ReadHeaderTimeout like a stalled request head; the
// handshake's writes go through c.Write and its write credit.
func (s *Server) startTLS(c *conn) (*tlsConn, error) {
	tc := tls.Server(c, s.certs.base)
	if err := tc.Handshake(); err != nil {
		s.counts.tlsFailed.Add(1)
		return nil, err
	}
	s.counts.tlsConns.Add(1)
	t := &tlsConn{Conn: tc, c: c}
	var b [1]byte
	if _, err := tc.Read(b[:]); err != nil {
		tc.Close()
		return nil, errClosedAfterHandshake
	}
	t.first, t.replay = b[0], true
	return t, nil
}

// errClosedAfterHandshake is startTLS's error for a session that ended
// (or failed) before its first byte of plaintext, such as a client
// checking the certificate; it is not logged.
var errClosedAfterHandshake = errors.New("closed before the first byte")

// ConnTLSState returns the TLS state of a connection the server handed to
// Options.Telnet (or any layer over it), nil for a plaintext one. With
// TLSOptions.ClientCAFile set, its VerifiedChains[0][0] is the client's
// certificate, verified against that CA; see ClientCertificate.
func ConnTLSState(nc net.Conn) *tls.ConnectionState {
	for nc != nil {
		if tc, ok := nc.(interface{ ConnectionState() tls.ConnectionState }); ok {
			st := tc.ConnectionState()
			return &st
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		nc = u.NetConn()
	}
	return nil
}

// RequestTLSState returns the TLS state of the connection an HTTP request
// came on, nil for plaintext.
func RequestTLSState(ctx *fasthttp.RequestCtx) *tls.ConnectionState {
	return ctx.TLSConnectionState()
}

// ClientCertificate returns the verified client certificate of a TLS
// state (the leaf of its first verified chain), nil when there is none:
// plaintext, or a server without a client CA. Its Subject.CommonName
// names the client.
func ClientCertificate(st *tls.ConnectionState) *x509.Certificate {
	if st == nil || len(st.VerifiedChains) == 0 || len(st.VerifiedChains[0]) == 0 {
		return nil
	}
	return st.VerifiedChains[0][0]
}

// refusePlaintextHTTP answers a plaintext request while TLS is required:
// 400 naming the key, and the connection is closed.
func (s *Server) refusePlaintextHTTP(ctx *fasthttp.RequestCtx) {
	s.counts.plainRefused.Add(1)
	s.rlog.Warn("conn.tls_required", ratelog.Client(ctx.RemoteAddr()),
		"refusing plaintext HTTP request: TLS is required (tsd.network.tls.required)", "path", string(ctx.Path()))
	writeError(ctx, fasthttp.StatusBadRequest, "TLS required",
		"This port accepts only TLS (tsd.network.tls.required=true); use https://")
	ctx.SetConnectionClose()
}
