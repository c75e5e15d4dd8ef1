package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/opentsdb"
)

// statsQuery is /api/stats/query's answer, decoded.
type statsQuery struct {
	Completed []json.RawMessage `json:"completed"`
	Running   []json.RawMessage `json:"running"`
}

type completedQuery struct {
	Query struct {
		Start, End string
		Queries    []struct{ Metric, Aggregator string }
	}
	Exception         string
	Executed          int
	User              *string
	RequestHeaders    map[string]string
	NumRunningQueries int
	HTTPResponse      struct {
		Code         int
		ReasonPhrase string
	} `json:"httpResponse"`
	QueryStartTimestamp, QueryCompletedTimestamp int64
	SentToClient                                 bool
	Stats                                        map[string]float64
	Remote                                       string
}

type runningQuery struct {
	Elapsed float64
	Headers map[string]string
	Query   struct {
		Queries []struct{ Metric string }
	}
	QueryStart int64
	Remote     string
	User       *string
}

func getStatsQuery(t *testing.T, base string) statsQuery {
	t.Helper()
	resp, body, err := get(t, base, "/api/stats/query")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/api/stats/query: %v %d %s", err, resp.StatusCode, body)
	}
	var sq statsQuery
	if err := json.Unmarshal([]byte(body), &sq); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	if !strings.HasPrefix(body, `{"completed":[`) {
		t.Errorf("body %.40s: want OpenTSDB's TreeMap order, completed first", body)
	}
	return sq
}

// jsonKeys lists an object's keys in the order written.
func jsonKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestStatsQueryCompleted: a finished /api/query is listed under
// "completed" as OpenTSDB's QueryStats bean serializes
// (src/stats/QueryStats.java: getRunningAndCompleteStats, markSerialized,
// the bean's getters): the TSQuery echo, exception "null", the HTTP
// status as {code, reasonPhrase}, timings in ms; the same query from the
// same remote address with the same status counts executed up, and a
// failed one is listed with its status and message.
func TestStatsQueryCompleted(t *testing.T) {
	q := newQueryStack(t, Options{}, opentsdb.Options{})
	loadHosts(t, q.st.w, "small", 2, 600)
	if sq := getStatsQuery(t, q.base); len(sq.Completed) != 0 || len(sq.Running) != 0 {
		t.Fatalf("before any query: %+v", sq)
	}
	small := fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:small", bigT0, bigT0+599)
	before := time.Now().UnixMilli()
	// One client, so one remote address and port for both.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxConnsPerHost: 1}}
	for range 2 {
		resp, err := client.Get(q.base + small)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("query: %v %v", err, resp)
		}
		io.Copy(io.Discard, resp.Body) // so the connection is reused
		resp.Body.Close()
	}
	sq := getStatsQuery(t, q.base)
	if len(sq.Completed) != 1 || len(sq.Running) != 0 {
		t.Fatalf("got %d completed, %d running; want 1 and 0 (the second run counted on the first): %s", len(sq.Completed), len(sq.Running), sq.Completed)
	}
	wantKeys := []string{"query", "exception", "executed", "user", "requestHeaders", "numRunningQueries",
		"httpResponse", "queryStartTimestamp", "queryCompletedTimestamp", "sentToClient", "stats", "remote"}
	if keys := jsonKeys(t, sq.Completed[0]); !slices.Equal(keys, wantKeys) {
		t.Errorf("keys %v, want %v", keys, wantKeys)
	}
	var c completedQuery
	if err := json.Unmarshal(sq.Completed[0], &c); err != nil {
		t.Fatal(err)
	}
	if c.Query.Start != fmt.Sprint(bigT0) || c.Query.End != fmt.Sprint(bigT0+599) || len(c.Query.Queries) != 1 ||
		c.Query.Queries[0].Metric != "small" || c.Query.Queries[0].Aggregator != "sum" {
		t.Errorf("query echo %+v", c.Query)
	}
	if c.Exception != "null" || c.Executed != 2 || c.User != nil || c.HTTPResponse.Code != 200 ||
		c.HTTPResponse.ReasonPhrase != "OK" || !c.SentToClient || c.NumRunningQueries != 0 {
		t.Errorf("completed %+v", c)
	}
	if c.QueryStartTimestamp < before || c.QueryCompletedTimestamp < c.QueryStartTimestamp ||
		c.Stats["totalTime"] < c.Stats["processingPreWriteTime"] || len(c.Stats) != 2 {
		t.Errorf("timings: start %d completed %d (asked at %d), stats %v", c.QueryStartTimestamp,
			c.QueryCompletedTimestamp, before, c.Stats)
	}
	if !strings.HasPrefix(c.Remote, "/127.0.0.1:") || c.RequestHeaders["Host"] == "" {
		t.Errorf("remote %q headers %v", c.Remote, c.RequestHeaders)
	}

	// A query the engine refuses: listed with its status and message.
	resp, _, err := get(t, q.base, fmt.Sprintf("/api/query?start=%d&m=sum:nosuch", bigT0), "Cookie", "session=secret")
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("unknown metric: %v %v", err, resp.StatusCode)
	}
	sq = getStatsQuery(t, q.base)
	if len(sq.Completed) != 2 {
		t.Fatalf("got %d completed, want 2", len(sq.Completed))
	}
	c = completedQuery{}
	if err := json.Unmarshal(sq.Completed[0], &c); err != nil { // newest first
		t.Fatal(err)
	}
	if c.HTTPResponse.Code != 400 || c.HTTPResponse.ReasonPhrase != "Bad Request" || c.SentToClient ||
		!strings.Contains(c.Exception, "nosuch") || c.Query.Queries[0].Metric != "nosuch" {
		t.Errorf("failed query listed as %+v", c)
	}
	if c.RequestHeaders["Cookie"] != "*******" {
		t.Errorf("cookie listed as %q, want it hidden", c.RequestHeaders["Cookie"])
	}
}

// TestStatsQueryBounded: the completed list keeps the last 256 queries,
// OpenTSDB's COMPLETED_QUERY_CACHE_SIZE (src/stats/QueryStats.java), the
// newest first.
func TestStatsQueryBounded(t *testing.T) {
	q := newQueryStack(t, Options{}, opentsdb.Options{})
	loadHosts(t, q.st.w, "small", 1, 600)
	for i := range maxCompletedQueries + 10 {
		resp, _, err := get(t, q.base, fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:small", bigT0, bigT0+1+i))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	sq := getStatsQuery(t, q.base)
	if len(sq.Completed) != 256 {
		t.Fatalf("%d completed, want 256", len(sq.Completed))
	}
	for i, want := range map[int]int{0: bigT0 + maxCompletedQueries + 10, 255: bigT0 + 11} {
		var c completedQuery
		if err := json.Unmarshal(sq.Completed[i], &c); err != nil {
			t.Fatal(err)
		}
		if c.Query.End != fmt.Sprint(want) {
			t.Errorf("completed[%d] ends at %s, want %d", i, c.Query.End, want)
		}
	}
}

// TestStatsQueryRunningWhileStalled: a large answer to a client that
// stopped reading is listed under "running" while its write waits, though
// it holds no query slot between its parts (api/answer), and under
// "completed", not sent in full, once the write timeout closes it.
func TestStatsQueryRunningWhileStalled(t *testing.T) {
	t.Parallel() // waits out write timeouts: overlap it with the others that do
	q := newQueryStack(t, Options{WriteTimeout: 2 * time.Second}, opentsdb.Options{})
	loadHosts(t, q.st.w, "big", stallHosts, 3600)
	stallClient(t, q.base, bigQuery("big"))
	// Once its write blocks, the stalled answer holds no slot.
	waitUntil(t, "the stalled answer to give its slot up", func() bool { return q.srv.AnswerStats().Running == 0 })
	sq := getStatsQuery(t, q.base)
	if len(sq.Running) != 1 || len(sq.Completed) != 0 {
		t.Fatalf("while stalled: %d running, %d completed; want 1 and 0", len(sq.Running), len(sq.Completed))
	}
	wantKeys := []string{"elapsed", "headers", "query", "queryStart", "remote", "user"}
	if keys := jsonKeys(t, sq.Running[0]); !slices.Equal(keys, wantKeys) {
		t.Errorf("keys %v, want %v (OpenTSDB's HashMap order)", keys, wantKeys)
	}
	var r runningQuery
	if err := json.Unmarshal(sq.Running[0], &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Query.Queries) != 1 || r.Query.Queries[0].Metric != "big" || r.Headers["Host"] != "x" ||
		!strings.HasPrefix(r.Remote, "/127.0.0.1:") || r.User != nil || r.Elapsed <= 0 || r.QueryStart == 0 {
		t.Errorf("running %+v", r)
	}
	waitUntil(t, "the stalled query to complete", func() bool {
		sq = getStatsQuery(t, q.base)
		return len(sq.Running) == 0 && len(sq.Completed) == 1
	})
	var c completedQuery
	if err := json.Unmarshal(sq.Completed[0], &c); err != nil {
		t.Fatal(err)
	}
	if c.SentToClient || c.Exception == "null" || c.HTTPResponse.Code != 200 || c.Query.Queries[0].Metric != "big" {
		t.Errorf("completed %+v", c)
	}
}

// TestStatsQueryUser: under access control each query is listed with the
// user it ran as (QueryStats.setUser) and its credentials hidden.
func TestStatsQueryUser(t *testing.T) {
	q := newQueryStack(t, Options{Auth: testAuthenticator(t)}, opentsdb.Options{})
	loadHosts(t, q.st.w, "small", 1, 600)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:pw"))
	resp, _, err := get(t, q.base, fmt.Sprintf("/api/query?start=%d&m=sum:small", bigT0), "Authorization", basic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("query: %v %v", err, resp.StatusCode)
	}
	resp, body, err := get(t, q.base, "/api/stats/query", "Authorization", basic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stats/query: %v %v", err, resp.StatusCode)
	}
	var sq statsQuery
	var c completedQuery
	if err := json.Unmarshal([]byte(body), &sq); err != nil || len(sq.Completed) != 1 {
		t.Fatalf("%v: %s", err, body)
	}
	if err := json.Unmarshal(sq.Completed[0], &c); err != nil {
		t.Fatal(err)
	}
	if c.User == nil || *c.User != "u" || c.RequestHeaders["Authorization"] != "*******" || strings.Contains(body, basic[len("Basic "):]) {
		t.Errorf("user %v, headers %v", c.User, c.RequestHeaders)
	}
}
