package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/opentsdb"
)

// TestQueryExp: points put through /api/put come back through an
// expression (a*2 + b per host, values written out from the put), and bad
// bodies are 400s with OpenTSDB's messages.
func TestQueryExp(t *testing.T) {
	base := startExpServer(t, `[{"metric":"a.m","timestamp":1700000000,"value":5,"tags":{"host":"h1"}},`+
		`{"metric":"a.m","timestamp":1700000060,"value":6,"tags":{"host":"h1"}},`+
		`{"metric":"b.m","timestamp":1700000000,"value":0.5,"tags":{"host":"h1"}},`+
		`{"metric":"b.m","timestamp":1700000060,"value":1.25,"tags":{"host":"h1"}}]`)
	q := `{"time":{"start":"1699999000","end":"1700001000","aggregator":"sum"},` +
		`"filters":[{"id":"f","tags":[{"type":"wildcard","tagk":"host","filter":"*","groupBy":true}]}],` +
		`"metrics":[{"id":"a","metric":"a.m","filter":"f"},{"id":"b","metric":"b.m","filter":"f"}],` +
		`"expressions":[{"id":"e","expr":"a * 2 + b"}]}`
	code, ctype, body := do(t, "POST", base+"/api/v1/query/exp", q)
	want := fmt.Sprintf(`{"outputs":[{"id":"e","dps":[[1700000000000,10.5],[1700000060000,13.25]],`+
		`"dpsMeta":{"firstTimestamp":1700000000000,"lastTimestamp":1700000060000,"setCount":2,"series":1},`+
		`"meta":[{"index":0,"metrics":["timestamp"]},{"index":1,"metrics":["a.m","b.m"],"commonTags":{"host":"h1"},"aggregatedTags":[]}]}],"query":%s}`, q)
	if code != 200 || ctype != contentTypeJSON || body != want {
		t.Errorf("POST /api/query/exp: %d %q\n%s\nwant\n%s", code, ctype, body, want)
	}
	for _, tc := range []struct {
		method, body string
		code         int
		msg          string
	}{
		{"POST", "", 400, `"message":"Missing message content"`},
		{"POST", `{"time":{"start":"1h-ago","aggregator":"sum"}}`, 400, `"message":"missing or empty metrics"`},
		{"POST", `{"metrics":[{"id":"a","metric":"a.m"}]}`, 400, `{"error":{"code":400,"message":"missing time"}}`},
		{"POST", `{"time":{"start":"1h-ago"},"metrics":[{"id":"a","metric":"a.m"}]}`, 400,
			`{"error":{"code":400,"message":"Invalid time","details":"Missing or empty aggregator"}}`},
		{"POST", strings.Replace(q, `"a * 2 + b"`, `"a * (2"`, 1), 400, `"message":"Unable to parse expression [a * (2] at 6: missing ')'"`},
		{"POST", strings.Replace(q, `"a.m"`, `"nope"`, 1), 400, `"message":"No such name for 'metrics': 'nope'"`},
		{"GET", "", 405, `"message":"Method not allowed"`},
	} {
		code, _, body := do(t, tc.method, base+"/api/query/exp", tc.body)
		if code != tc.code || !strings.Contains(body, tc.msg) {
			t.Errorf("%s %s: %d %s, want %d with %s", tc.method, tc.body, code, body, tc.code, tc.msg)
		}
	}
}

// startExpServer starts the HTTP server over a read stack and an OpenTSDB
// engine whose clock reads 1,700,003,000 s, for the expression tests
// (exp and gexp), puts each body through /api/put?sync in turn, and
// returns the server's base URL.
func startExpServer(t *testing.T, puts ...string) string {
	t.Helper()
	st := newReadStack(t)
	e, err := opentsdb.New(&opentsdb.Options{Reader: st.r, UIDs: st.u, Index: st.ix, Logger: quietLog(),
		Now: func() time.Time { return time.Unix(1_700_003_000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	_, base := startServer(t, Options{Ingest: st.w, Query: e})
	for _, put := range puts {
		if code, _, body := do(t, "POST", base+"/api/put?sync", put); code != 204 {
			t.Fatalf("put: %d %s", code, body)
		}
	}
	return base
}
