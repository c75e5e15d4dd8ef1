package api

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics holds the figures /metrics serves beside Options.Stats: the Go
// runtime and process collectors, and the histograms of request,
// ingest and query durations, all in one client_golang registry. Every
// label value is a route table name, a protocol or a query API, never a
// raw path, so the series a scrape returns are bounded by the route table.
//
// Make one with NewMetrics; it is safe for concurrent use.
type Metrics struct {
	reg    *prometheus.Registry
	http   *prometheus.HistogramVec // route, code
	ingest *prometheus.HistogramVec // protocol
	query  *prometheus.HistogramVec // api
	// dropped counts access-log lines dropped because the writer was
	// slow (accesslog.go).
	dropped prometheus.Counter
}

// durationBuckets are the upper bounds, in seconds, of every duration
// histogram: 1 ms to about 2 minutes, doubling.
var durationBuckets = prometheus.ExponentialBuckets(0.001, 2, 18)

// NewMetrics returns a registry holding the Go runtime and process
// collectors and tsd's duration histograms.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.http = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tsd_http_request_duration_seconds",
		Help:    "Seconds HTTP requests took from their head's read to their handler's return, by route (the route table's name; unmatched for none) and status code.",
		Buckets: durationBuckets,
	}, []string{"route", "code"})
	m.ingest = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tsd_ingest_request_duration_seconds",
		Help:    "Seconds a write request took (telnet: a batch of put lines, from its first line to its commit), by protocol.",
		Buckets: durationBuckets,
	}, []string{"protocol"})
	m.query = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tsd_query_duration_seconds",
		Help:    "Seconds queries took, answer included, by API (opentsdb, promql, exp, gexp, last).",
		Buckets: durationBuckets,
	}, []string{"api"})
	m.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tsd_http_access_log_dropped_total",
		Help: "Access log lines dropped because the log's writer was slower than the requests.",
	})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.http, m.ingest, m.query, m.dropped,
	)
	return m
}

// Ingest protocols of tsd_ingest_request_duration_seconds.
const (
	ProtocolTelnet      = "telnet"
	ProtocolPut         = "put"
	ProtocolInflux      = "influx"
	ProtocolRemoteWrite = "remote_write"
	ProtocolRollup      = "rollup"
)

// IngestObserver returns what records one write of protocol taking d,
// for write paths outside the HTTP server (telnet).
func (m *Metrics) IngestObserver(protocol string) func(d time.Duration) {
	o := m.ingest.WithLabelValues(protocol)
	return func(d time.Duration) { o.Observe(d.Seconds()) }
}

// Register adds collectors made outside the api (the store's and the
// write-ahead log's latency histograms, built in cmd/tsd) to the one
// registry /metrics gathers; a name already registered is an error.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// maxStatus bounds the status codes counted by code; others count as 0.
const maxStatus = 600

// routeMetrics are one route's observers, made before the first request
// so that a request costs atomic adds and no lookup by name.
type routeMetrics struct {
	name   string
	m      *Metrics
	ingest prometheus.Observer // nil unless a write route
	query  prometheus.Observer // nil unless a query route
	// api names the query API for the slow-query log ("" if none), and
	// slowKind is its ratelog kind (query.slow.<api>).
	api, slowKind string
	// codes holds the route's child of m.http by status code, made on a
	// code's first request.
	codes [maxStatus]atomic.Pointer[prometheus.Observer]
}

// routeKinds maps route names to their ingest protocol or query API.
var (
	ingestRoutes = map[string]string{
		"/api/put": ProtocolPut, "/write": ProtocolInflux, "/api/v2/write": ProtocolInflux,
		"/api/v1/write": ProtocolRemoteWrite, "/api/rollup": ProtocolRollup,
	}
	queryRoutes = map[string]string{
		"/api/query": "opentsdb", "/api/v1/query": "promql", "/api/v1/query_range": "promql",
		"/api/query/exp": "exp", "/api/query/gexp": "gexp", "/api/query/last": "last",
	}
)

func (m *Metrics) newRoute(name string) *routeMetrics {
	r := &routeMetrics{name: name, m: m}
	if p, ok := ingestRoutes[name]; ok {
		r.ingest = m.ingest.WithLabelValues(p)
	}
	if a, ok := queryRoutes[name]; ok {
		r.query, r.api, r.slowKind = m.query.WithLabelValues(a), a, "query.slow."+a
	}
	return r
}

// observe records one request of the route.
func (r *routeMetrics) observe(code int, d time.Duration) {
	if code < 0 || code >= maxStatus {
		code = 0
	}
	p := r.codes[code].Load()
	if p == nil {
		o := r.m.http.WithLabelValues(r.name, strconv.Itoa(code))
		r.codes[code].CompareAndSwap(nil, &o)
		p = r.codes[code].Load()
	}
	s := d.Seconds()
	(*p).Observe(s)
	if r.ingest != nil {
		r.ingest.Observe(s)
	}
	if r.query != nil {
		r.query.Observe(s)
	}
}
