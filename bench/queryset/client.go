package queryset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// API selects how a query is sent.
type API string

// The two query APIs.
const (
	OpenTSDB API = "opentsdb" // POST /api/query
	PromQL   API = "promql"   // GET /api/v1/query_range, one request per expression
)

// Client sends the set's queries to a server over HTTP. A run is timed
// from its first request written to its last answer read; building the
// requests and checking the answers are left out of the clock. Not safe
// for concurrent use.
type Client struct {
	// Base is the server's URL, e.g. http://127.0.0.1:4242.
	Base string
	// HTTP, when set, sends through net/http (with its transport's
	// goroutines and gzip); nil sends on one keep-alive connection driven
	// by the caller's goroutine, uncompressed, as a lean client does.
	HTTP *http.Client
	// Form sends each PromQL query as a POST of its parameters in a form
	// body, as Grafana's Prometheus data source does by default; false
	// sends a GET with them in the URL.
	Form bool

	conn *conn
}

// Grafana returns a client that sends PromQL range queries as Grafana's
// Prometheus data source does from the Grafana server: Go's net/http
// client (its transport's goroutines; gzip asked for and inflated) on one
// keep-alive connection, each query a POST of a form body.
func Grafana(base string) *Client {
	return &Client{Base: base, Form: true, HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}}
}

// Do runs q once through api with its range ending at end and returns the
// time from the first request to the last answer.
func (c *Client) Do(ctx context.Context, api API, q *Query, end time.Time) (time.Duration, error) {
	type request struct {
		method, target, ctype string
		body                  []byte
		check                 func([]byte) error
	}
	var reqs []request
	switch api {
	case OpenTSDB:
		reqs = append(reqs, request{http.MethodPost, "/api/query", jsonType, q.OpenTSDBBody(end), checkOpenTSDB})
	case PromQL:
		for _, e := range q.PromQL {
			if c.Form {
				reqs = append(reqs, request{http.MethodPost, rangePath, formType, []byte(promParams(q, e, end).Encode()), checkPrometheus})
			} else {
				reqs = append(reqs, request{http.MethodGet, PromTarget(q, e, end), "", nil, checkPrometheus})
			}
		}
	default:
		return 0, fmt.Errorf("unknown api %q", api)
	}
	if err := c.ready(ctx); err != nil {
		return 0, err
	}
	var took time.Duration
	for _, r := range reqs {
		start := time.Now()
		status, body, err := c.send(ctx, r.method, r.target, r.ctype, r.body)
		took += time.Since(start)
		if err != nil {
			return 0, err
		}
		if status != http.StatusOK {
			return 0, fmt.Errorf("%s %s: status %d: %.200s", r.method, r.target, status, body)
		}
		if err := r.check(body); err != nil {
			return 0, err
		}
	}
	return took, nil
}

// ready opens the connection before the clock starts.
func (c *Client) ready(ctx context.Context) error {
	if c.HTTP != nil {
		return nil
	}
	if c.conn == nil {
		u, err := url.Parse(c.Base)
		if err != nil || u.Host == "" {
			return fmt.Errorf("bad base URL %q", c.Base)
		}
		c.conn = &conn{addr: u.Host}
	}
	return c.conn.dial(ctx)
}

// Content types of request bodies.
const (
	jsonType = "application/json"
	formType = "application/x-www-form-urlencoded"
)

// send makes one request, with a body of content type ctype unless body
// is nil, and returns the status and the body.
func (c *Client) send(ctx context.Context, method, target, ctype string, body []byte) (int, []byte, error) {
	if c.HTTP == nil {
		return c.conn.do(ctx, method, target, ctype, body)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+target, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Close closes the client's connection.
func (c *Client) Close() {
	if c.conn != nil {
		c.conn.close()
	}
}

// PromTarget is the request target of expr, one of q's PromQL expressions,
// over q's range ending at end.
func PromTarget(q *Query, expr string, end time.Time) string {
	return rangePath + "?" + promParams(q, expr, end).Encode()
}

const rangePath = "/api/v1/query_range"

// promParams are the range query parameters of expr over q's range
// ending at end.
func promParams(q *Query, expr string, end time.Time) url.Values {
	v := url.Values{}
	v.Set("query", expr)
	v.Set("start", strconv.FormatInt(end.Add(-q.Range).Unix(), 10))
	v.Set("end", strconv.FormatInt(end.Unix(), 10))
	v.Set("step", strconv.FormatFloat(q.Step.Seconds(), 'f', -1, 64))
	return v
}

func checkOpenTSDB(b []byte) error {
	var rs []json.RawMessage
	if err := json.Unmarshal(b, &rs); err != nil {
		return fmt.Errorf("opentsdb answer is not a JSON array: %w", err)
	}
	return nil
}

func checkPrometheus(b []byte) error {
	var r struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Status != "success" {
		return fmt.Errorf("prometheus answer not a success: %.200s", b)
	}
	return nil
}

// Stats summarises repeated runs of one query.
type Stats struct {
	Runs, Errors   int
	FirstError     error
	Mean, P50, P99 time.Duration
	Max            time.Duration
}

// Repeat runs q n times and summarises the latencies of the successful runs.
func (c *Client) Repeat(ctx context.Context, api API, q *Query, end time.Time, n int) Stats {
	return c.RepeatEach(ctx, api, n, func() (*Query, time.Time) { return q, end })
}

// RepeatEach runs n queries, each the one next gives (Query.Varied), and
// summarises them as Repeat does; drawing a query is off the clock.
func (c *Client) RepeatEach(ctx context.Context, api API, n int, next func() (*Query, time.Time)) Stats {
	return repeat(n, func() (time.Duration, error) {
		q, end := next()
		return c.Do(ctx, api, q, end)
	})
}

// Cycle runs n queries, the queries of qs in turn, and summarises them
// together: the first queries a daemon answers after a bulk load, whose
// slowest against their median shows a cold start.
func (c *Client) Cycle(ctx context.Context, api API, qs []*Query, end time.Time, n int) Stats {
	var s samples
	for i := range n {
		s.add(c.Do(ctx, api, qs[i%len(qs)], end))
	}
	return s.stats()
}

// Interleave runs q n times on c and on peer in turn, one run on each at
// a time, and summarises each side: both then see the same minutes of a
// shared machine, whose speed moves several-fold from one to the next,
// and the ratio of their means reads the servers rather than the minutes.
func Interleave(ctx context.Context, c, peer *Client, api API, q *Query, end time.Time, n int) (Stats, Stats) {
	var a, b samples
	for range n {
		a.add(c.Do(ctx, api, q, end))
		b.add(peer.Do(ctx, api, q, end))
	}
	return a.stats(), b.stats()
}

// Floor times n requests of GET /api/version, the server's cheapest
// answer, on the connection the queries use: the round trip every query
// pays before any work. On a shared virtual machine it moves several-fold
// from minute to minute, so a query's figure reads against the floor
// measured beside it.
func (c *Client) Floor(ctx context.Context, n int) Stats {
	return repeat(n, func() (time.Duration, error) { return c.version(ctx) })
}

// version times one GET /api/version.
func (c *Client) version(ctx context.Context) (time.Duration, error) {
	if err := c.ready(ctx); err != nil {
		return 0, err
	}
	start := time.Now()
	status, body, err := c.send(ctx, http.MethodGet, "/api/version", "", nil)
	took := time.Since(start)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET /api/version: status %d: %.200s", status, body)
	}
	return took, err
}

// InterleaveFloor is Floor on c and peer in turn, as Interleave runs
// queries.
func InterleaveFloor(ctx context.Context, c, peer *Client, n int) (Stats, Stats) {
	var a, b samples
	for range n {
		a.add(c.version(ctx))
		b.add(peer.version(ctx))
	}
	return a.stats(), b.stats()
}

// repeat calls run n times and summarises the durations of the calls
// that succeeded.
func repeat(n int, run func() (time.Duration, error)) Stats {
	var s samples
	for range n {
		s.add(run())
	}
	return s.stats()
}

// Summarize summarises durations of successful runs timed elsewhere, as
// Repeat summarises its own.
func Summarize(ds []time.Duration) Stats {
	return (&samples{ds: ds}).stats()
}

// samples collects the durations of runs and their errors.
type samples struct {
	ds     []time.Duration
	errors int
	first  error
}

// add records one run.
func (s *samples) add(d time.Duration, err error) {
	if err != nil {
		s.errors++
		if s.first == nil {
			s.first = err
		}
		return
	}
	s.ds = append(s.ds, d)
}

// stats summarises the runs: mean, p50 and p99 of the successful ones.
func (s *samples) stats() Stats {
	st := Stats{Runs: len(s.ds) + s.errors, Errors: s.errors, FirstError: s.first}
	if len(s.ds) == 0 {
		return st
	}
	ds := slices.Clone(s.ds)
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	st.Mean = sum / time.Duration(len(ds))
	st.P50 = ds[rank(len(ds), 0.5)]
	st.P99 = ds[rank(len(ds), 0.99)]
	st.Max = ds[len(ds)-1]
	return st
}

// rank is the nearest-rank index of quantile q among n sorted values.
func rank(n int, q float64) int {
	return min(max(int(q*float64(n)+0.5)-1, 0), n-1)
}
