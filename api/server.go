package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/admit"
	"github.com/tsd-db/tsd/api/auth"
	"github.com/tsd-db/tsd/internal/ratelog"
)

// ErrServerClosed is returned by Serve once Close has been called.
var ErrServerClosed = errors.New("api: server closed")

// Server serves tsd's APIs on one listener. Create it with New, bind with
// Listen (or bring a listener), run Serve, and stop it with Close. It is safe
// for concurrent use.
type Server struct {
	opts        Options
	log         *slog.Logger
	rlog        *ratelog.Logger // lines a client can make the server repeat
	routes      *router
	versionJSON []byte // /api/version body, immutable
	indexPage   []byte // "/" body, immutable
	http        *fasthttp.Server
	httpConns   *connQueue       // sniffed HTTP connections, accepted by http
	latency     latencyHistogram // every HTTP request's handling time
	// routeStats are every route's observers by name (observe.go);
	// unmatched counts requests no route served.
	routeStats map[string]*routeMetrics
	unmatched  *routeMetrics
	// shortcut answers repeated PromQL range queries before routing
	// (shortcut.go); nil when something must stand before the route.
	shortcut *rangeShortcut
	access   *accessLog // nil without Options.AccessLog
	// statsReg holds the collector of Options.Stats, gathered with
	// Options.Metrics for /metrics (metrics_expo.go).
	statsReg *prometheus.Registry
	// work is the parent context of the queries handlers run (not the
	// fasthttp.RequestCtx: see promapi.Options.Context). stopWork cancels
	// it when Close's grace period for in-flight requests runs out.
	work     context.Context
	stopWork context.CancelFunc

	// mu guards the lifecycle. Lock order: mu, then nothing.
	mu struct {
		sync.Mutex
		closed      bool
		httpStarted bool
		listeners   map[net.Listener]struct{}
		conns       map[*conn]connKind
	}
	// wg counts the goroutines the server started: one per connection
	// being sniffed or served as telnet, plus the fasthttp accept loop.
	wg     sync.WaitGroup
	counts connCounts

	// queries hands out the query slots OpenTSDB's and PromQL's queries
	// share; answers counts what became of their answers (answers.go).
	queries *admit.Limiter
	answers answerCounts
	// qlog lists running and recent OpenTSDB queries (/api/stats/query).
	qlog queryLog

	// openPaths are Options.OpenPaths, served without credentials.
	openPaths map[string]struct{}
	// cors is the parsed CORSDomains and CORSHeaders (browser.go).
	cors cors
	// certs are the TLS certificates, nil without TLS; its reload
	// goroutine runs from New to Close.
	certs *tlsCerts
}

// New returns a Server for opts after EnsureDefaults and Validate. With
// TLS configured it loads the certificates (an error if they do not load)
// and starts the goroutine that reloads them, which Close stops.
func New(opts Options) (*Server, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger, rlog: opts.RateLog}
	var err error
	if s.queries, err = admit.New(admit.Options{MaxConcurrent: opts.MaxConcurrentQueries, MaxQueued: opts.MaxQueuedQueries}); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	if s.cors, err = newCORS(opts.CORSDomains, opts.CORSHeaders); err != nil {
		return nil, err
	}
	s.work, s.stopWork = context.WithCancel(context.Background())
	s.openPaths = make(map[string]struct{}, len(opts.OpenPaths))
	for _, p := range opts.OpenPaths {
		s.openPaths[p] = struct{}{}
	}
	s.routes = s.newRouter()
	s.routes.applyMode(opts.Mode)
	s.initRouteMetrics()
	s.shortcut = s.newRangeShortcut()
	s.statsReg = prometheus.NewRegistry()
	s.statsReg.MustRegister(statsCollector{opts.Stats})
	s.versionJSON = appendVersionJSON(nil, opts.Version)
	s.indexPage = s.routes.appendIndex(nil, opts.Version.Version)
	s.httpConns = newConnQueue()
	s.http = &fasthttp.Server{
		Handler:      s.serveHTTP,
		ErrorHandler: s.handleReadError,
		// Bodies stream: the ingest endpoints parse them as they arrive
		// (the limit applies to decompressed bytes), every other endpoint
		// gets its body buffered up to MaxRequestBodySize by bufferBody.
		StreamRequestBody:  true,
		MaxRequestBodySize: opts.MaxRequestBodySize,
		// The connections keep their own read deadlines (conn_read.go):
		// fasthttp's ReadTimeout would cut long streamed bodies, its
		// IdleTimeout is not progress-based, and with both zero the
		// only read deadline fasthttp sets is the one headerReceived asks
		// for, which marks the end of a request's head.
		HeaderReceived:        s.headerReceived,
		ConnState:             s.connState,
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
		Logger:                fasthttpLogger{s.rlog},
	}
	s.mu.listeners = make(map[net.Listener]struct{})
	s.mu.conns = make(map[*conn]connKind)
	if opts.TLS.enabled() {
		if s.certs, err = newTLSCerts(opts.TLS, s.log); err != nil {
			return nil, err
		}
		go s.certs.run()
	}
	if opts.AccessLog != nil {
		s.access = newAccessLog(opts.AccessLog, opts.Metrics.dropped)
	}
	return s, nil
}

// Listen opens the TCP listener for Options.Addr.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", s.opts.Addr, err)
	}
	return ln, nil
}

// Serve accepts connections on ln until Close, then returns
// ErrServerClosed; any other error is a failing listener. Serve closes ln.
// It may run on several listeners at once.
func (s *Server) Serve(ln net.Listener) error {
	if !s.addListener(ln) {
		ln.Close()
		return ErrServerClosed
	}
	defer s.removeListener(ln)
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			if !isTemporary(err) {
				return fmt.Errorf("api: accept on %s: %w", ln.Addr(), err)
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.rlog.Warn("conn.accept", "", "accept failed; retrying", "err", err, "in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if c := s.track(nc, time.Now()); c != nil {
			go s.serveConn(c)
		}
	}
}

// isTemporary reports accept errors that pass, such as running out of
// file descriptors, as opposed to a closed or broken listener.
func isTemporary(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED)
}

// addListener registers ln and starts the fasthttp loop once; it reports
// false after Close.
func (s *Server) addListener(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return false
	}
	s.mu.listeners[ln] = struct{}{}
	if !s.mu.httpStarted {
		s.mu.httpStarted = true
		s.wg.Add(1)
		go s.runHTTP()
	}
	return true
}

func (s *Server) removeListener(ln net.Listener) {
	s.mu.Lock()
	delete(s.mu.listeners, ln)
	s.mu.Unlock()
	ln.Close()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.closed
}

// runHTTP runs fasthttp on the queue of sniffed HTTP connections until
// the queue closes.
func (s *Server) runHTTP() {
	defer s.wg.Done()
	if err := s.http.Serve(s.httpConns); err != nil {
		s.log.Error("http server stopped", "err", err)
	}
}

// Close stops the server: listeners first, then connections that are
// being sniffed or served as telnet, then HTTP after in-flight requests
// finish or Options.ShutdownTimeout passes. It waits for every goroutine
// the server started. Close is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	for ln := range s.mu.listeners {
		ln.Close()
	}
	s.closeConnsLocked(func(k connKind) bool { return k != kindHTTP })
	s.mu.Unlock()

	s.shutdownHTTP()

	s.mu.Lock()
	s.closeConnsLocked(func(connKind) bool { return true })
	s.mu.Unlock()
	s.wg.Wait()
	if s.certs != nil {
		s.certs.close()
	}
	if s.access != nil {
		s.access.close()
	}
	return nil
}

// closeConnsLocked closes the raw connections whose kind matches; their
// owners see the error, close the wrapper and untrack it.
func (s *Server) closeConnsLocked(match func(connKind) bool) {
	for c, k := range s.mu.conns {
		if match(k) {
			c.Conn.Close()
		}
	}
}

// shutdownHTTP lets fasthttp finish in-flight requests, bounded by
// Options.ShutdownTimeout, then cancels the queries still running and
// stops the accept loop.
func (s *Server) shutdownHTTP() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	defer s.stopWork()
	if err := s.http.ShutdownWithContext(ctx); err != nil {
		s.log.Warn("HTTP requests still running at shutdown; closing their connections",
			"timeout", s.opts.ShutdownTimeout, "err", err)
	}
	// Shutdown is a no-op if the loop has not registered the queue yet;
	// closing it ourselves makes the loop end as soon as it starts.
	s.httpConns.Close()
}

// handleReadError answers requests fasthttp could not read, in OpenTSDB's
// error JSON.
func (s *Server) handleReadError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		s.rlog.Warn("http.body_too_large", ratelog.Client(ctx.RemoteAddr()), "request body over the limit",
			"path", string(ctx.Path()), "limit", s.opts.MaxRequestBodySize)
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "Request body too large",
			fmt.Sprintf("The request body is larger than the limit of %d bytes", s.opts.MaxRequestBodySize))
	case isTimeout(err):
		writeError(ctx, fasthttp.StatusRequestTimeout, "Request timeout", err.Error())
	default:
		writeError(ctx, fasthttp.StatusBadRequest, "Bad request", err.Error())
	}
}

// isTimeout reports an error that is a read or write deadline passing.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// serveHTTP is the fasthttp handler: the router, then the end of a body
// the handler left unread.
func (s *Server) serveHTTP(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	if !s.shortcut.serve(ctx) {
		s.handle(ctx)
	}
	finishBody(ctx)
	s.finishRequest(ctx, start)
}

// serve runs e, once the request's credentials allow it (authorize),
// first buffering the request body (within MaxRequestBodySize) unless e
// reads it as a stream.
func (s *Server) serve(ctx *fasthttp.RequestCtx, e endpoint) {
	ctx.SetUserValue(routeKey{}, s.routeOf(ctx.Path(), e))
	route, need := routeRole(ctx, e)
	if !s.authorize(ctx, e, route, need) {
		return
	}
	s.noteReading(need)
	if !e.stream && e.handle != nil && !s.bufferBody(ctx) {
		return
	}
	serveEndpoint(ctx, e)
	s.markAdminChange(ctx, e, need)
}

// noteReading tells Options.Reading that a request to a read route (one
// that needs the role need) begins.
func (s *Server) noteReading(need auth.Role) {
	if s.opts.Reading != nil && need == auth.Read {
		s.opts.Reading()
	}
}

// markAdminChange marks every point changed (internal/changes) after a
// change on an admin route, a rollup rebuild above all: the PromQL answer
// cache then gives no answer computed before it. Writes and deletes of
// points mark their own spans where they are made, renames and
// /api/dropcaches through the name caches (cmd/tsd). An endpoint that
// keepsPoints (/api/compact) only moves them, and its flush and
// compactions mark their rows as moves, so a dashboard's answers
// outlive it.
func (s *Server) markAdminChange(ctx *fasthttp.RequestCtx, e endpoint, need auth.Role) {
	c := s.opts.Changes
	if c == nil || isReadMethod(ctx) || e.keepsPoints {
		return
	}
	if need == auth.Admin {
		c.MarkAll()
	}
}

// bufferBody reads a streamed request body whole, so handlers can use
// PostBody and PostArgs; a body over MaxRequestBodySize is answered 413.
func (s *Server) bufferBody(ctx *fasthttp.RequestCtx) bool {
	if !ctx.Request.IsBodyStream() {
		return true
	}
	b, err := readBounded(ctx.RequestBodyStream(), ctx.Request.Header.ContentLength(), s.opts.MaxRequestBodySize)
	if err != nil {
		s.handleReadError(ctx, err)
		ctx.SetConnectionClose()
		return false
	}
	ctx.Request.SetBodyRaw(b)
	return true
}

// readBounded reads a body of length n (-1: unknown, chunked) of at most
// limit bytes, else fasthttp.ErrBodyTooLarge.
func readBounded(r io.Reader, n, limit int) ([]byte, error) {
	if n > limit {
		return nil, fasthttp.ErrBodyTooLarge
	}
	if n >= 0 {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err == nil && len(b) > limit {
		err = fasthttp.ErrBodyTooLarge
	}
	return b, err
}

// drainLimit is how much of an unread body is read past after the handler
// to keep the connection (and let the client read the answer, which a
// close with unread bytes would reset); a longer rest closes it.
const drainLimit = 1 << 20

// finishBody reads what the handler left of a streamed body, since its
// bytes would otherwise be read as the next request; when much is left,
// the connection is closed instead.
func finishBody(ctx *fasthttp.RequestCtx) {
	if !ctx.Request.IsBodyStream() || ctx.Response.ConnectionClose() {
		return
	}
	if _, err := io.CopyN(io.Discard, ctx.RequestBodyStream(), drainLimit); err != io.EOF {
		ctx.SetConnectionClose()
	}
}

// fasthttpLogger sends fasthttp's log lines, mostly about requests it
// could not read, to the rate-limited log.
type fasthttpLogger struct{ log *ratelog.Logger }

// Printf budgets a line by the last address among args, which in
// fasthttp's lines about a connection is the client's.
func (l fasthttpLogger) Printf(format string, args ...any) {
	client := ""
	for _, a := range args {
		if addr, ok := a.(net.Addr); ok {
			client = ratelog.Client(addr)
		}
	}
	l.log.Warn("http.serve", client, "http: "+fmt.Sprintf(format, args...))
}
