package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/tsd-db/tsd/api/admit"
	"github.com/tsd-db/tsd/api/auth"
	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/last"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/uid/index/lookup"
	"github.com/tsd-db/tsd/uid/tree"
)

// Default values of Options.
const (
	DefaultAddr               = ":4242"
	DefaultMaxRequestBodySize = 256 << 20
	DefaultReadHeaderTimeout  = 30 * time.Second
	DefaultIdleTimeout        = 5 * time.Minute
	DefaultMaxConns           = 10_000
	DefaultShutdownTimeout    = 10 * time.Second
	DefaultWriteTimeout       = time.Minute
	DefaultMinWriteRate       = 1024
)

// VersionInfo is what /api/version reports, in OpenTSDB's field names.
// Every field is a string, as in OpenTSDB; empty ones are sent empty.
type VersionInfo struct {
	Version       string // release, e.g. "0.1.0" or "devel"
	ShortRevision string // first 7 hex digits of the commit
	FullRevision  string // full commit hash
	Timestamp     string // commit time, Unix seconds
	RepoStatus    string // "MINT" or "MODIFIED"
	User          string // who built it
	Host          string // where it was built
	Repo          string // module or repository path
	Branch        string // branch it was built from
}

// ConnHandler serves a raw connection that is not HTTP (the telnet line
// protocol). ServeConn owns conn: it must return once conn is closed, which
// Server.Close does on shutdown, and the server closes conn after it returns.
// The server keeps conn's read deadline (ReadHeaderTimeout until the first
// '\n', then IdleTimeout), so a read past it fails with
// os.ErrDeadlineExceeded and ServeConn should return; ServeConn must not
// set read deadlines itself.
type ConnHandler interface {
	ServeConn(conn net.Conn)
}

// Options configure a Server. The zero value of each field means its
// default; call EnsureDefaults then Validate (New does both).
type Options struct {
	// Addr is the TCP address Listen binds, host:port; port 0 picks a free
	// port. Default ":4242".
	Addr string
	// Version is reported by /api/version. Default: all fields empty.
	Version VersionInfo
	// MaxRequestBodySize is the largest request body accepted, in bytes; a
	// larger one is answered 413 and logged with the client address.
	// Default 256 MiB.
	MaxRequestBodySize int
	// ReadHeaderTimeout bounds the time from accepting a connection to
	// having its first request head: an HTTP request line and headers, or
	// a telnet connection's first line (what a TLS handshake reads will
	// count too). Each later HTTP request on the connection has as long
	// again from its first byte to the end of its headers. A connection
	// that misses it is closed (HTTP: answered 408 first). Default 30
	// seconds; negative: no limit.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a connection, HTTP or telnet, once a read has
	// waited this long without receiving a byte, outside a request head:
	// between HTTP requests, inside a request body, and between or inside
	// telnet lines after the first. Time the server spends handling a
	// request is not counted. Closing happens up to a sixteenth of it
	// later, which spares re-arming the deadline on every read. Default 5
	// minutes; negative: no limit.
	IdleTimeout time.Duration
	// MaxConns bounds the open connections; a connection accepted beyond
	// it is closed at once, counted (ConnStats.Refused) and logged within
	// RateLog's budget. Default 10,000; negative: no limit.
	MaxConns int
	// ShutdownTimeout bounds how long Close lets in-flight HTTP requests
	// finish before closing their connections. Default 10 seconds.
	ShutdownTimeout time.Duration
	// Telnet serves connections whose first byte is not an ASCII capital
	// letter. Default nil: such connections are logged and closed.
	Telnet ConnHandler
	// Annotations stores the notes of /api/annotation, /api/annotations
	// and their bulk forms in the data table. Default nil: those endpoints
	// answer 501.
	Annotations *annotation.Store
	// Trees stores OpenTSDB's trees for /api/tree and its sub-endpoints.
	// Default nil: those endpoints answer 501.
	Trees *tree.Store
	// Ingest writes the points of /api/put, /write, /api/v2/write and
	// /api/v1/write. Default nil: those endpoints answer 501.
	Ingest *service.Writer
	// Gate is the daemon's read-only state: while it refuses, the other
	// writes (annotations, UID assign, rename and uidmeta changes) answer
	// 503 with Retry-After naming the reason; points are refused by
	// Ingest's own gate. Default nil: never read-only.
	Gate *ingest.Gate
	// Query runs the queries of /api/query (GET, POST, DELETE). Default
	// nil: /api/query answers 501.
	Query *opentsdb.Engine
	// Last answers /api/query/last from the series index, the head and
	// the store. Default nil: /api/query/last answers 501.
	Last *last.Service
	// Meta answers /api/suggest, /api/search/lookup, /api/uid/* and
	// /api/dropcaches from the UID table and the series index. Default
	// nil: those endpoints answer 501.
	Meta *lookup.Service
	// Config is what /api/config lists: every configuration key and its
	// value as text. Default nil: an empty object.
	Config map[string]string
	// RollupRebuild runs `tsd rollup rebuild` in the daemon for POST
	// /api/rollup/rebuild, returning when the job ends or ctx (the
	// server's shutdown) stops it; a metric without a UID is
	// uid.ErrNoSuchName. Default nil: the route answers 501.
	RollupRebuild func(ctx context.Context, req RollupRebuildRequest) (RollupRebuildResult, error)
	// Compact flushes the head, drains the compaction queue and compacts
	// the store for POST /api/compact (tsd compact --url), returning when
	// done or ctx (the server's shutdown) stops it. Default nil: the route
	// answers 501.
	Compact func(ctx context.Context) (CompactResult, error)
	// Stats returns tsd's own counters for /api/stats and /metrics; it is
	// called once per request and must be safe for concurrent use.
	// Default nil: both list nothing.
	Stats func() []Stat
	// Status returns what /api/status reports (status.go): the store's
	// settings, retention, rollups, head and log. It is called once per
	// request and must be safe for concurrent use. Default nil:
	// /api/status answers 501.
	Status func() Status
	// PromQL serves the Prometheus HTTP API (/api/v1/query, query_range,
	// series, labels, ...; package promapi) over PromQL.Queryable. Default
	// zero: Queryable nil, those endpoints answer 501 (a /api/v1/query
	// without a query parameter still goes to OpenTSDB's /api/query).
	PromQL promapi.Options
	// Changes is marked after every change made on an admin route (a
	// rollup rebuild, a UID assigned), for the PromQL answer cache
	// (internal/changes). Default nil: nothing is marked.
	Changes *changes.Tracker
	// Reading, when set, is called as a request to a route that needs no
	// more than the read role begins (a query, from the PromQL answer
	// cache too, a search, a status page). cmd/tsd wires it to the row
	// cache's reserve (query/read), whose filler waits for reads to stop.
	// Default nil.
	Reading func()
	// MaxInflightBytes bounds the decompressed request bytes being
	// ingested at once across all requests; a request that would exceed it
	// is answered 503 with Retry-After. Default 1 GiB.
	MaxInflightBytes int64
	// WriteTimeout closes a connection, HTTP or telnet, whose peer takes
	// no byte of a reply for this long (tsd.network.write_timeout), or
	// falls that far behind MinWriteRate (see conn.Write). Default 1
	// minute; negative: no limit.
	WriteTimeout time.Duration
	// MinWriteRate is the rate, in bytes per second, below which a peer
	// falls behind: each byte it takes gives it 1/MinWriteRate s more to
	// keep a reply waiting, up to WriteTimeout (tsd.network.write_min_rate;
	// see conn.Write). A peer reading nothing is thus closed even while
	// the kernel trickles a few bytes to it, and a slow reader above the
	// rate is served. Default 1024.
	MinWriteRate int
	// MaxConcurrentQueries is how many queries, OpenTSDB's and PromQL's
	// together, run at once (tsd.query.max_concurrent); see package
	// api/admit. Default 2 × GOMAXPROCS.
	MaxConcurrentQueries int
	// MaxQueuedQueries is how many more queries wait for one of those
	// slots; past it a query is answered 503 with Retry-After
	// (tsd.query.max_queued). Default 100; negative: none waits.
	MaxQueuedQueries int
	// Auth turns access control on (tsd.auth.config): every route needs
	// a user whose role covers it (routeRoles in routes.go; a route not
	// listed there needs admin), and refusals and admin actions go to its
	// audit log. The server does not close it. Default nil: no access
	// control, every route open as before.
	Auth *auth.Authenticator
	// OpenPaths are exact request paths served without credentials while
	// Auth is set (tsd.auth.open_paths), such as /metrics for a scraper.
	// Default none.
	OpenPaths []string
	// AllowStateChangingGET lets a GET (or a GET with method_override)
	// assign or rename UIDs, change uidmeta, write or delete annotations,
	// drop caches and delete through /api/query, as OpenTSDB did
	// (tsd.http.allow_state_changing_get). Default false: such a GET is
	// answered 405 naming the key (browser.go).
	AllowStateChangingGET bool
	// JSONP lets ?jsonp=fn wrap OpenTSDB answers (tsd.http.jsonp.enable).
	// Default false: a request with jsonp is answered 400 naming the key.
	JSONP bool
	// CORSDomains is OpenTSDB's tsd.http.request.cors_domains: a comma
	// list of origins, or "*", allowed to read answers cross-origin;
	// preflight OPTIONS is answered for them. Default empty: no CORS, and
	// OPTIONS on OpenTSDB routes is 405.
	CORSDomains string
	// CORSHeaders is tsd.http.request.cors_headers, the request headers a
	// preflight allows. Default DefaultCORSHeaders (OpenTSDB's).
	CORSHeaders string
	// Mode leaves out the write routes (ReadOnly) or the query routes
	// (WriteOnly), as tsd.mode does (mode.go). Default ReadWrite.
	Mode Mode
	// TLS configures TLS on the port (tls.go). Default: off.
	TLS TLSOptions
	// Logger receives the server's log lines. Default slog.Default().
	Logger *slog.Logger
	// RateLog receives the log lines a client can make the server repeat
	// (refused connections, deadlines, unreadable requests). Default a
	// ratelog.Logger writing to Logger with its default budget.
	RateLog *ratelog.Logger
	// Metrics are the collectors /metrics serves beside Stats (the Go
	// runtime, the process, request durations). Default NewMetrics().
	Metrics *Metrics
	// SlowQueryThreshold is tsd.query.slow_log_threshold: a query (any
	// API) that takes at least this long is logged at WARN with its
	// text. Default DefaultSlowQueryThreshold; negative: off.
	SlowQueryThreshold time.Duration
	// AccessLog receives one line per HTTP request (accesslog.go). Nil,
	// the default, writes none.
	AccessLog io.Writer
}

// DefaultSlowQueryThreshold is Options.SlowQueryThreshold's default.
const DefaultSlowQueryThreshold = 10 * time.Second

// EnsureDefaults sets every zero field to its default and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxRequestBodySize == 0 {
		o.MaxRequestBodySize = DefaultMaxRequestBodySize
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MinWriteRate <= 0 {
		o.MinWriteRate = DefaultMinWriteRate
	}
	if o.MaxConcurrentQueries == 0 {
		o.MaxConcurrentQueries = admit.DefaultMaxConcurrent()
	}
	if o.MaxQueuedQueries == 0 {
		o.MaxQueuedQueries = admit.DefaultMaxQueued
	}
	o.TLS.ensureDefaults()
	if o.CORSHeaders == "" {
		o.CORSHeaders = DefaultCORSHeaders
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RateLog == nil {
		o.RateLog = ratelog.New(ratelog.Options{Logger: o.Logger})
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.SlowQueryThreshold == 0 {
		o.SlowQueryThreshold = DefaultSlowQueryThreshold
	}
	return o
}

// Validate reports the first invalid field, naming it.
func (o *Options) Validate() error {
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return fmt.Errorf("api: Addr %q: %w", o.Addr, err)
	}
	if o.MaxRequestBodySize < 0 {
		return fmt.Errorf("api: MaxRequestBodySize %d is negative", o.MaxRequestBodySize)
	}
	if err := o.PromQL.Validate(); err != nil {
		return fmt.Errorf("api: PromQL: %w", err)
	}
	if o.ShutdownTimeout < 0 {
		return fmt.Errorf("api: ShutdownTimeout %v is negative", o.ShutdownTimeout)
	}
	if o.Mode > WriteOnly {
		return fmt.Errorf("api: Mode %v is not one of ReadWrite, ReadOnly, WriteOnly", o.Mode)
	}
	if err := o.TLS.validate(); err != nil {
		return err
	}
	if o.MaxConcurrentQueries < 0 {
		return fmt.Errorf("api: MaxConcurrentQueries %d is negative", o.MaxConcurrentQueries)
	}
	return nil
}
