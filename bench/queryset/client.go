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

// Client sends the set's queries to a server over HTTP.
type Client struct {
	// Base is the server's URL, e.g. http://127.0.0.1:4242.
	Base string
	// HTTP is the client; nil means one with a 5-minute timeout.
	HTTP *http.Client
}

func (c *Client) http() *http.Client {
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: 5 * time.Minute}
	}
	return c.HTTP
}

// Do runs q once through api with its range ending at end and returns the
// time from the first request to the last answer.
func (c *Client) Do(ctx context.Context, api API, q *Query, end time.Time) (time.Duration, error) {
	start := time.Now()
	switch api {
	case OpenTSDB:
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/api/query", bytes.NewReader(q.OpenTSDBBody(end)))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		if err := c.expect(req, checkOpenTSDB); err != nil {
			return 0, err
		}
	case PromQL:
		for _, e := range q.PromQL {
			if err := c.expect(c.promRequest(ctx, q, e, end)); err != nil {
				return 0, err
			}
		}
	default:
		return 0, fmt.Errorf("unknown api %q", api)
	}
	return time.Since(start), nil
}

func (c *Client) promRequest(ctx context.Context, q *Query, expr string, end time.Time) (*http.Request, func([]byte) error) {
	v := url.Values{}
	v.Set("query", expr)
	v.Set("start", strconv.FormatInt(end.Add(-q.Range).Unix(), 10))
	v.Set("end", strconv.FormatInt(end.Unix(), 10))
	v.Set("step", strconv.FormatFloat(q.Step.Seconds(), 'f', -1, 64))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+"/api/v1/query_range?"+v.Encode(), nil)
	return req, checkPrometheus
}

// expect sends req and checks a 200 answer with check.
func (c *Client) expect(req *http.Request, check func([]byte) error) error {
	if req == nil {
		return fmt.Errorf("bad request")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %.200s", req.Method, req.URL.Path, resp.Status, body)
	}
	return check(body)
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
}

// Repeat runs q n times and summarises the latencies of the successful runs.
func (c *Client) Repeat(ctx context.Context, api API, q *Query, end time.Time, n int) Stats {
	var s Stats
	var ds []time.Duration
	for i := 0; i < n; i++ {
		d, err := c.Do(ctx, api, q, end)
		if err != nil {
			s.Errors++
			if s.FirstError == nil {
				s.FirstError = err
			}
			continue
		}
		ds = append(ds, d)
	}
	s.Runs = n
	if len(ds) == 0 {
		return s
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	s.Mean = sum / time.Duration(len(ds))
	s.P50 = ds[rank(len(ds), 0.5)]
	s.P99 = ds[rank(len(ds), 0.99)]
	return s
}

// rank is the nearest-rank index of quantile q among n sorted values.
func rank(n int, q float64) int {
	return min(max(int(q*float64(n)+0.5)-1, 0), n-1)
}
