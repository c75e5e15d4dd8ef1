package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
	"github.com/tsd-db/tsd/uid/index/lookup"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// metaStack is a real store, UID table, series index, head and writer
// behind a real server with the metadata endpoints.
type metaStack struct {
	base string
	uids *uid.UIDs
	w    *service.Writer
	meta *tsmeta.Store
}

func newMetaStack(t testing.TB, extra Options) *metaStack {
	t.Helper()
	ctx := context.Background()
	dir, log := t.TempDir(), quietLog()
	db, err := pebble.Open(dir, &pebble.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u, err := uid.Open(ctx, db, &uid.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureTable(ctx, schema.MetaTableSpec(schema.DefaultMetaTable)); err != nil {
		t.Fatal(err)
	}
	metaTbl, err := db.Table(ctx, schema.DefaultMetaTable)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(ctx, metaTbl, u, &index.Options{RefreshInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	h, err := head.OpenHead(db.FS(), dir+"/wal", &head.HeadOptions{Logger: log, Registrar: ix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	w, err := service.NewWriter(service.Options{UIDs: u, Head: h, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := tsmeta.New(metaTbl)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := lookup.New(lookup.Options{UIDs: u, Index: ix, TSMeta: ts})
	if err != nil {
		t.Fatal(err)
	}
	extra.Ingest, extra.Meta = w, svc
	return &metaStack{base: serveTB(t, extra), uids: u, w: w, meta: ts}
}

// serveTB is startServer for a testing.TB (fuzz targets set up once).
func serveTB(t testing.TB, opts Options) string {
	t.Helper()
	opts.Addr, opts.Logger = "127.0.0.1:0", quietLog()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// tseries is a test series by name.
type tseries struct {
	metric string
	tags   map[string]string
}

// put writes one point of each series through /api/put.
func (m *metaStack) put(t *testing.T, ss []tseries) {
	t.Helper()
	var pts []map[string]any
	for i, s := range ss {
		pts = append(pts, map[string]any{"metric": s.metric, "timestamp": 1700000000 + i, "value": i, "tags": s.tags})
	}
	body, _ := json.Marshal(pts)
	resp, out := sendReq(t, "POST", m.base+"/api/put?details", body)
	if resp.StatusCode != 200 || !strings.Contains(out, fmt.Sprintf(`"success":%d`, len(ss))) {
		t.Fatalf("put = %d %s", resp.StatusCode, out)
	}
}

// get sends a request and decodes the JSON answer into v (unless nil).
func (m *metaStack) call(t *testing.T, method, path, body string, v any) (int, string) {
	t.Helper()
	resp, out := sendReq(t, method, m.base+path, []byte(body))
	if v != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, out)
		}
	}
	return resp.StatusCode, out
}

var metaSeries = []tseries{
	{"sys.cpu.user", map[string]string{"host": "web01", "dc": "lga"}},
	{"sys.cpu.user", map[string]string{"host": "web02", "dc": "lga"}},
	{"sys.cpu.user", map[string]string{"host": "web03", "dc": "phx"}},
	{"sys.cpu.nice", map[string]string{"host": "web01"}},
	{"sys.mem", map[string]string{"host": "web01", "dc": "phx"}},
	{"sys.mem", map[string]string{"server": "web01"}},
	{"app.hits", map[string]string{"path": "/x"}},
	{"ünïcode.m", map[string]string{"ключ": "значение"}},
}

// names lists the distinct names of a kind in byte order.
func names(ss []tseries, kind string) []string {
	set := map[string]bool{}
	for _, s := range ss {
		switch kind {
		case "metrics":
			set[s.metric] = true
		case "tagk":
			for k := range s.tags {
				set[k] = true
			}
		case "tagv":
			for _, v := range s.tags {
				set[v] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func TestSuggestEndpoint(t *testing.T) {
	m := newMetaStack(t, Options{})
	m.put(t, metaSeries)
	for _, tc := range []struct {
		kind, q string
		max     int
	}{{"metrics", "", 0}, {"metrics", "sys.cpu", 0}, {"metrics", "sys", 2}, {"tagk", "", 0}, {"tagv", "web", 0},
		{"tagv", "зна", 0}, {"metrics", "ü", 0}, {"metrics", "nope", 0}} {
		var want []string
		for _, n := range names(metaSeries, tc.kind) {
			if strings.HasPrefix(n, tc.q) {
				want = append(want, n)
			}
		}
		if tc.max > 0 && len(want) > tc.max {
			want = want[:tc.max]
		}
		want = append([]string{}, want...)
		path := "/api/suggest?type=" + tc.kind + "&q=" + url.QueryEscape(tc.q)
		if tc.max > 0 {
			path += fmt.Sprintf("&max=%d", tc.max)
		}
		var got []string
		if code, out := m.call(t, "GET", path, "", &got); code != 200 || !slices.Equal(got, want) {
			t.Errorf("GET %s = %d %s, want %q", path, code, out, want)
		}
		body := fmt.Sprintf(`{"type":%q,"q":%q,"max":%d}`, tc.kind, tc.q, tc.max)
		got = nil
		if code, out := m.call(t, "POST", "/api/v1/suggest", body, &got); code != 200 || !slices.Equal(got, want) {
			t.Errorf("POST %s = %d %s, want %q", body, code, out, want)
		}
	}
	for path, want := range map[string]string{
		"/api/suggest?q=sys":              `{"error":{"code":400,"message":"Missing parameter <code>type</code>"}}`,
		"/api/suggest?type=metric":        `{"error":{"code":400,"message":"Invalid 'type' parameter:metric"}}`,
		"/api/suggest?type=tagk&max=lots": `{"error":{"code":400,"message":"Unable to parse 'max' as a number"}}`,
	} {
		if code, out := m.call(t, "GET", path, "", nil); code != 400 || out != want {
			t.Errorf("GET %s = %d %s, want 400 %s", path, code, out, want)
		}
	}
	if code, out := m.call(t, "POST", "/api/suggest", `{"q":"x"}`, nil); code != 400 || !strings.Contains(out, "Missing 'type' parameter") {
		t.Errorf("POST without type = %d %s", code, out)
	}
}

// lookupResult is the decoded /api/search/lookup answer.
type lookupResult struct {
	Type         string               `json:"type"`
	Metric       *string              `json:"metric"`
	Tags         []map[string]*string `json:"tags"`
	Limit        int                  `json:"limit"`
	Time         *float64             `json:"time"`
	TotalResults int                  `json:"totalResults"`
	StartIndex   *int                 `json:"startIndex"`
	Results      []struct {
		TSUID  string            `json:"tsuid"`
		Metric string            `json:"metric"`
		Tags   map[string]string `json:"tags"`
	} `json:"results"`
}

// tsuid builds a series' TSUID from the UID table: metric, then pairs in
// tag-key UID order.
func (m *metaStack) tsuid(t *testing.T, s tseries) string {
	ctx := context.Background()
	id := func(k uid.Kind, n string) []byte {
		v, err := m.uids.Lookup(ctx, k, []byte(n))
		if err != nil {
			t.Fatal(err)
		}
		return m.uids.AppendID(nil, k, v)
	}
	var pairs [][]byte
	for k, v := range s.tags {
		pairs = append(pairs, append(id(uid.TagK, k), id(uid.TagV, v)...))
	}
	slices.SortFunc(pairs, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
	out := id(uid.Metric, s.metric)
	for _, p := range pairs {
		out = append(out, p...)
	}
	return strings.ToUpper(hex.EncodeToString(out))
}

func TestLookupEndpoint(t *testing.T) {
	m := newMetaStack(t, Options{})
	m.put(t, metaSeries)
	for _, tc := range []struct {
		m     string
		match func(tseries) bool
	}{
		{"sys.cpu.user", func(s tseries) bool { return s.metric == "sys.cpu.user" }},
		{"sys.cpu.user{dc=lga}", func(s tseries) bool { return s.metric == "sys.cpu.user" && s.tags["dc"] == "lga" }},
		{"sys.mem{host=*}", func(s tseries) bool { _, ok := s.tags["host"]; return s.metric == "sys.mem" && ok }},
		{"*{host=web01,host=web03}", func(s tseries) bool { return s.tags["host"] == "web01" || s.tags["host"] == "web03" }},
		{"{*=web01}", func(s tseries) bool { return slices.Contains(slices.Collect(maps.Values(s.tags)), "web01") }},
		{"ünïcode.m{ключ=*}", func(s tseries) bool { return s.metric == "ünïcode.m" }},
	} {
		var want []string
		for _, s := range metaSeries {
			if tc.match(s) {
				want = append(want, m.tsuid(t, s))
			}
		}
		slices.Sort(want)
		var got lookupResult
		path := "/api/search/lookup?limit=1000&m=" + url.QueryEscape(tc.m)
		code, out := m.call(t, "GET", path, "", &got)
		var tsuids []string
		for _, r := range got.Results {
			tsuids = append(tsuids, r.TSUID)
			if r.Metric == "" || r.Tags == nil {
				t.Errorf("%s: result without names: %s", tc.m, out)
			}
		}
		if code != 200 || got.Type != "LOOKUP" || got.Limit != 1000 || got.TotalResults != len(want) ||
			got.Time == nil || got.StartIndex == nil || *got.StartIndex != 0 || !slices.Equal(tsuids, want) {
			t.Errorf("GET %s = %d %s\nwant tsuids %q", path, code, out, want)
		}
	}
	// The shape, byte for byte, apart from the time.
	code, out := m.call(t, "POST", "/api/search/lookup",
		`{"metric":"sys.cpu.nice","tags":[{"key":"host","value":"*"}],"limit":5}`, nil)
	want := `{"type":"LOOKUP","metric":"sys.cpu.nice","tags":[{"key":"host","value":"*"}],"limit":5,"time":T,` +
		`"totalResults":1,"results":[{"tsuid":"` + m.tsuid(t, metaSeries[3]) +
		`","metric":"sys.cpu.nice","tags":{"host":"web01"}}],"startIndex":0}`
	if i := strings.Index(out, `"time":`); code != 200 || i < 0 {
		t.Fatalf("POST lookup = %d %s", code, out)
	} else if j := strings.IndexByte(out[i:], ','); strings.Replace(out, out[i:i+j], `"time":T`, 1) != want {
		t.Errorf("POST lookup = %s\nwant %s", out, want)
	} else if tm := out[i+len(`"time":`) : i+j]; !lookupTime.MatchString(tm) {
		// SearchQuery.time is a Java float: Jackson writes "3.0".
		t.Errorf("POST lookup time %q, want a Java float such as 3.0", tm)
	}
	var def lookupResult
	if m.call(t, "GET", "/api/search/lookup?m=*", "", &def); def.Limit != 25 || def.TotalResults != len(metaSeries) {
		t.Errorf("default limit: %+v", def)
	}
	// TimeSeriesLookup stops at the limit and SearchRpc's LookupCB counts
	// what it returned (setTotalResults(tsuids.size())); a limit of 0 or
	// less is no limit, echoed as given.
	for _, tc := range []struct {
		qs           string
		limit, total int
	}{{"m=sys.cpu.user&limit=1", 1, 1}, {"m=*&limit=0", 0, len(metaSeries)}, {"m=*&limit=-2", -2, len(metaSeries)}} {
		var got lookupResult
		if m.call(t, "GET", "/api/search/lookup?"+tc.qs, "", &got); got.Limit != tc.limit ||
			got.TotalResults != tc.total || len(got.Results) != tc.total {
			t.Errorf("lookup?%s = limit %d total %d, %d results; want %d, %d", tc.qs, got.Limit, got.TotalResults, len(got.Results), tc.limit, tc.total)
		}
	}
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/api/search/lookup", "", 400, `{"error":{"code":400,"message":"Missing parameter <code>m</code>"}}`},
		{"GET", "/api/search/lookup?m=sys.mem{host", "", 400, `{"error":{"code":400,"message":"Unable to parse query","details":"Missing '}' at the end of: sys.mem{host"}}`},
		{"GET", "/api/search/lookup?m=sys.mem{host}", "", 400, `"message":"Unable to parse query","details":"When parsing tag 'host': invalid tag: host"`},
		{"GET", "/api/search/lookup?m=sys.mem&limit=x", "", 400, `{"error":{"code":400,"message":"Unable to convert 'limit' to a valid number"}}`},
		// SearchRpc's ErrCB: BadRequestException(NOT_FOUND, message, cause)
		// puts the NoSuchUniqueName's own message in details.
		{"GET", "/api/search/lookup?m=no.such", "", 404,
			`{"error":{"code":404,"message":"Unable to resolve one or more UIDs","details":"No such name for 'metrics': 'no.such'"}}`},
		{"GET", "/api/search/lookup?m=sys.mem{host=web99}", "", 404,
			`{"error":{"code":404,"message":"Unable to resolve one or more UIDs","details":"No such name for 'tagv': 'web99'"}}`},
		{"POST", "/api/search/lookup", `{"tags":[]}`, 400, `{"error":{"code":400,"message":"Missing metric and tags. Please supply at least one value."}}`},
		{"POST", "/api/search/lookup", `{"metric":`, 400, `"message":"Unable to parse the given JSON"`},
		{"GET", "/api/search/annotation?query=x", "", 501, `{"error":{"code":501,"message":"Endpoint not implemented: /api/search/annotation"}}`},
		{"GET", "/api/search/bogus", "", 400, `{"error":{"code":400,"message":"Invalid search query type supplied"}}`},
		{"PUT", "/api/search/lookup?m=x", "", 400, `{"error":{"code":400,"message":"Unsupported method: PUT"}}`},
	} {
		code, out := m.call(t, tc.method, tc.path, tc.body, nil)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.path, code, out, tc.code, tc.want)
		}
	}
}

func TestUIDAssignEndpoint(t *testing.T) {
	m := newMetaStack(t, Options{AllowStateChangingGET: true}) // OpenTSDB's GET forms
	var got map[string]map[string]string
	code, out := m.call(t, "GET", "/api/uid/assign?metric=sys.a,sys.b&tagv=v1", "", &got)
	want := map[string]map[string]string{"metric": {"sys.a": "000001", "sys.b": "000002"}, "tagv": {"v1": "000001"}}
	if code != 200 || !reflect.DeepEqual(got, want) {
		t.Errorf("assign = %d %s", code, out)
	}
	code, out = m.call(t, "POST", "/api/uid/assign", `{"metric":["sys.c","sys.a","bad!"],"tagk":["host"]}`, nil)
	// TSDB.assignUid validates with Tags.validateString(type, name): the
	// message names the type as the request gave it ("Invalid metric").
	wantOut := `{"metric":{"sys.c":"000003"},"metric_errors":{"bad!":"Invalid metric (\"bad!\"): illegal character: !",` +
		`"sys.a":"Name already exists with UID: 000001"},"tagk":{"host":"000001"}}`
	if code != 400 || out != wantOut {
		t.Errorf("assign with errors = %d %s\nwant 400 %s", code, out, wantOut)
	}
	// The name is checked before the type, so an unknown type with a bad
	// name reports the name, in the type's words.
	code, out = m.call(t, "POST", "/api/uid/assign", `{"Tagv":["v!"],"foo":["a!","a"]}`, nil)
	wantOut = `{"Tagv":{},"Tagv_errors":{"v!":"Invalid Tagv (\"v!\"): illegal character: !"},` +
		`"foo":{},"foo_errors":{"a":"Unknown type name","a!":"Invalid foo (\"a!\"): illegal character: !"}}`
	if code != 400 || out != wantOut {
		t.Errorf("assign with typed errors = %d %s\nwant 400 %s", code, out, wantOut)
	}
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/api/uid/assign", "", `{"error":{"code":400,"message":"Missing values to assign UIDs"}}`},
		{"POST", "/api/uid/assign", `{"metric":"x"}`, `"message":"Unable to parse the given JSON"`},
	} {
		if code, out := m.call(t, tc.method, tc.path, tc.body, nil); code != 400 || !strings.Contains(out, tc.want) {
			t.Errorf("%s %s %s = %d %s", tc.method, tc.path, tc.body, code, out)
		}
	}
	if code, out := m.call(t, "GET", "/api/uid/tsmeta?tsuid=000001", "", nil); code != 404 ||
		out != `{"error":{"code":404,"message":"Could not find Timeseries meta data"}}` {
		t.Errorf("tsmeta = %d %s", code, out) // TestTSMetaEndpoint has the rest
	}
}

func TestUIDRenameEndpoint(t *testing.T) {
	m := newMetaStack(t, Options{AllowStateChangingGET: true}) // OpenTSDB's GET forms
	m.put(t, metaSeries)
	if code, out := m.call(t, "GET", "/api/uid/rename?metric=sys.mem&name=sys.memory", "", nil); code != 200 || out != `{"result":"true"}` {
		t.Fatalf("rename = %d %s", code, out)
	}
	var sugg []string
	m.call(t, "GET", "/api/suggest?type=metrics&q=sys.me", "", &sugg)
	if !slices.Equal(sugg, []string{"sys.memory"}) {
		t.Errorf("suggest after rename = %q", sugg)
	}
	var res lookupResult
	if m.call(t, "GET", "/api/search/lookup?m=sys.memory", "", &res); res.TotalResults != 2 {
		t.Errorf("lookup after rename: %+v", res)
	}
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/api/uid/rename?metric=sys.mem", "", `{"error":{"code":400,"message":"Missing necessary values to rename UID"}}`},
		{"GET", "/api/uid/rename?metric=sys.mem&name=x", "", `{"result":"false","error":"Name(\"sys.mem\") does not exist"}`},
		{"POST", "/api/uid/rename", `{"tagk":"host","name":"dc"}`, `{"result":"false","error":"An UID with name dc for tagk already exists"}`},
		{"POST", "/api/uid/rename", `{"tagv":"web01","name":"bad name"}`, `{"result":"false","error":"Invalid tagv (\"bad name\"): illegal character: U+0020"}`},
		// TSDB.renameUid validates both names before it looks at the type.
		{"POST", "/api/uid/rename", `{"foo":"a!","name":"b"}`, `{"result":"false","error":"Invalid foo (\"a!\"): illegal character: !"}`},
		{"POST", "/api/uid/rename", `{"foo":"a","name":"b"}`, `{"result":"false","error":"Unknown type name"}`},
	} {
		if code, out := m.call(t, tc.method, tc.path, tc.body, nil); code != 400 || out != tc.want {
			t.Errorf("%s %s %s = %d %s, want 400 %s", tc.method, tc.path, tc.body, code, out, tc.want)
		}
	}
}

func TestUIDMetaEndpoint(t *testing.T) {
	m := newMetaStack(t, Options{AllowStateChangingGET: true}) // OpenTSDB's GET forms
	m.put(t, metaSeries[:1])                                   // sys.cpu.user is metric 000001
	get := func() string {
		_, out := m.call(t, "GET", "/api/uid/uidmeta?uid=000001&type=metric", "", nil)
		return out
	}
	fresh := `{"uid":"000001","type":"METRIC","name":"sys.cpu.user","description":"","notes":"","created":0,"custom":null,"displayName":""}`
	if out := get(); out != fresh {
		t.Errorf("fresh uidmeta = %s", out)
	}
	code, out := m.call(t, "POST", "/api/uid/uidmeta", `{"uid":"000001","type":"metric","displayName":"CPU","custom":{"owner":"jd","a":"b"}}`, nil)
	posted := `{"uid":"000001","type":"METRIC","name":"sys.cpu.user","description":"","notes":"","created":0,"custom":{"a":"b","owner":"jd"},"displayName":"CPU"}`
	if code != 200 || out != posted || get() != posted {
		t.Errorf("post = %d %s, get %s", code, out, get())
	}
	// Stored where OpenTSDB keeps it.
	cells, err := m.uids.Table().Get(context.Background(), []byte{0, 0, 1}, nil)
	var stored string
	for _, c := range cells {
		if c.Family == "name" && string(c.Qualifier) == "metric_meta" {
			stored = string(c.Value)
		}
	}
	if err != nil || !strings.Contains(stored, `"displayName":"CPU"`) {
		t.Errorf("stored metric_meta = %q %v", stored, err)
	}
	code, out = m.call(t, "GET", "/api/uid/uidmeta?uid=000001&type=metric&method_override=put&notes=n", "", nil)
	put := `{"uid":"000001","type":"METRIC","name":"sys.cpu.user","description":"","notes":"n","created":0,"custom":null,"displayName":""}`
	if code != 200 || out != put {
		t.Errorf("put = %d %s", code, out)
	}
	if code, _ := m.call(t, "POST", "/api/uid/uidmeta?uid=000001&type=metric", "", nil); code != 304 {
		t.Errorf("no change = %d", code)
	}
	if code, out := m.call(t, "DELETE", "/api/uid/uidmeta?uid=000001&type=metric", "", nil); code != 204 || out != "" || get() != fresh {
		t.Errorf("delete = %d %q, then %s", code, out, get())
	}
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/api/uid/uidmeta?type=metric", "", 400, `{"error":{"code":400,"message":"Missing parameter <code>uid</code>"}}`},
		{"GET", "/api/uid/uidmeta?uid=000001&type=host", "", 400, `{"error":{"code":400,"message":"Invalid type requested: host"}}`},
		{"GET", "/api/uid/uidmeta?uid=00000Z&type=tagk", "", 400, `"message":"Invalid UID: 00000Z"`},
		{"GET", "/api/uid/uidmeta?uid=0001&type=tagk", "", 400, `"message":"Wrong id.length = 2 which is != 3 required for 'tagk'"`},
		{"GET", "/api/uid/uidmeta?uid=000009&type=tagk", "", 404, `"message":"Could not find the requested UID"`},
		// UIDMeta.syncToStorage's IllegalArgumentException, wrapped by
		// UniqueIdRpc as BadRequestException(e): its message twice.
		{"POST", "/api/uid/uidmeta", `{"type":"tagk","notes":"x"}`, 400, `{"error":{"code":400,"message":"Missing UID","details":"Missing UID"}}`},
		{"PUT", "/api/uid/uidmeta", `{"uid":"000001","notes":"x"}`, 400, `{"error":{"code":400,"message":"Missing type","details":"Missing type"}}`},
		// UIDMeta.delete's, as BadRequestException("Unable to delete UIDMeta information", e).
		{"DELETE", "/api/uid/uidmeta", `{"type":"tagk"}`, 400,
			`{"error":{"code":400,"message":"Unable to delete UIDMeta information","details":"Missing UID"}}`},
		// Without a body parseUIDMetaQS requires both parameters.
		{"POST", "/api/uid/uidmeta?type=tagk&notes=x", "", 400, `{"error":{"code":400,"message":"Missing parameter <code>uid</code>"}}`},
		{"DELETE", "/api/uid/uidmeta?uid=000001&type=", "", 400, `{"error":{"code":400,"message":"Missing parameter <code>type</code>"}}`},
		{"POST", "/api/uid/uidmeta", `{"uid":"000001","type":"tagk","custom":[1]}`, 400, `"message":"Unable to parse the given JSON"`},
		{"PATCH", "/api/uid/uidmeta", "", 405, `"message":"Method not allowed"`},
	} {
		code, out := m.call(t, tc.method, tc.path, tc.body, nil)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s %s %s = %d %s, want %d %s", tc.method, tc.path, tc.body, code, out, tc.code, tc.want)
		}
	}
}

func TestAggregatorsConfigFilters(t *testing.T) {
	m := newMetaStack(t, Options{Config: map[string]string{"tsd.network.port": "4242", "tsd.core.auto_create_metrics": "true"}})
	// OpenTSDB 2.4's registered names (Aggregators.java), in byte order.
	want := strings.Fields("avg count dev diff ep50r3 ep50r7 ep75r3 ep75r7 ep90r3 ep90r7 ep95r3 ep95r7 ep999r3 ep999r7 " +
		"ep99r3 ep99r7 first last max median mimmax mimmin min mult none p50 p75 p90 p95 p99 p999 pfsum squareSum sum zimsum")
	var aggs []string
	if code, out := m.call(t, "GET", "/api/aggregators", "", &aggs); code != 200 || !slices.Equal(aggs, want) {
		t.Errorf("aggregators = %d %s", code, out)
	}
	if code, out := m.call(t, "GET", "/api/config", "", nil); code != 200 ||
		out != `{"tsd.core.auto_create_metrics":"true","tsd.network.port":"4242"}` {
		t.Errorf("config = %d %s", code, out)
	}
	var filters map[string]struct{ Examples, Description string }
	code, out := m.call(t, "POST", "/api/v1/config/filters", "", &filters)
	keys := slices.Sorted(maps.Keys(filters))
	wantKeys := []string{"iliteral_or", "iwildcard", "literal_or", "not_iliteral_or", "not_key", "not_literal_or", "regexp", "wildcard"}
	if code != 200 || !slices.Equal(keys, wantKeys) ||
		!strings.HasPrefix(filters["literal_or"].Description, "Accepts one or more exact values and matches if the series contains any of them.") ||
		!strings.HasPrefix(filters["wildcard"].Examples, "host=wildcard(web*)") {
		t.Errorf("filters = %d %s", code, out)
	}
	if code, _ := m.call(t, "DELETE", "/api/aggregators", "", nil); code != 405 {
		t.Errorf("DELETE aggregators = %d", code)
	}
}

func TestDropCachesEndpoint(t *testing.T) {
	m := newMetaStack(t, Options{AllowStateChangingGET: true}) // OpenTSDB's GET forms
	m.put(t, metaSeries)
	entries := func() int {
		n := 0
		for _, ks := range m.uids.Stats() {
			n += ks.Names.Entries + ks.IDs.Entries
		}
		return n
	}
	if entries() == 0 {
		t.Fatal("no cached names after put")
	}
	for _, method := range []string{"GET", "DELETE"} {
		if code, out := m.call(t, method, "/api/dropcaches", "", nil); code != 200 || out != `{"status":"200","message":"Caches dropped"}` {
			t.Errorf("%s dropcaches = %d %s", method, code, out)
		}
	}
	if n := entries(); n != 0 {
		t.Errorf("%d cache entries after dropcaches", n)
	}
	if code, _ := m.call(t, "POST", "/api/dropcaches", "", nil); code != 405 {
		t.Errorf("POST dropcaches = %d", code)
	}
	// Names still resolve from the store afterwards.
	var res lookupResult
	if m.call(t, "GET", "/api/search/lookup?m=sys.cpu.user", "", &res); res.TotalResults != 3 {
		t.Errorf("lookup after dropcaches: %+v", res)
	}
}

func TestStatsAndMetricsEndpoints(t *testing.T) {
	stats := func() []Stat {
		return []Stat{
			{Name: "tsd.uid.cache-hit", Help: "UID cache hits.", Counter: true, Value: 12, Tags: []StatTag{{"kind", "metrics"}}},
			{Name: "tsd.uid.cache-hit", Help: "UID cache hits.", Counter: true, Value: 3, Tags: []StatTag{{"kind", "tagk"}}},
			{Name: "tsd.head.series", Help: "Series in the head.", Value: 7},
			{Name: "tsd.odd-name", Help: "Quote \" and back\\slash.", Value: 0.5, Tags: []StatTag{{"v", "a\"b\\c\nd"}}},
		}
	}
	_, base := startServer(t, Options{Stats: stats})
	host, _ := os.Hostname()
	var got []struct {
		Metric    string            `json:"metric"`
		Timestamp int64             `json:"timestamp"`
		Value     string            `json:"value"`
		Tags      map[string]string `json:"tags"`
	}
	code, _, out := do(t, "GET", base+"/api/stats", "")
	if err := json.Unmarshal([]byte(out), &got); code != 200 || err != nil || len(got) != 4 {
		t.Fatalf("stats = %d %s %v", code, out, err)
	}
	if g := got[0]; g.Metric != "tsd.uid.cache-hit" || g.Value != "12" || g.Timestamp < 1700000000 ||
		!maps.Equal(g.Tags, map[string]string{"host": host, "kind": "metrics"}) {
		t.Errorf("first stat = %+v", g)
	}
	if g := got[3]; g.Value != "0.5" || g.Tags["host"] != host {
		t.Errorf("gauge stat = %+v", g)
	}
	code, ctype, out := do(t, "GET", base+"/metrics", "")
	want := "# HELP tsd_uid_cache_hit_total UID cache hits.\n# TYPE tsd_uid_cache_hit_total counter\n" +
		"tsd_uid_cache_hit_total{kind=\"metrics\"} 12\ntsd_uid_cache_hit_total{kind=\"tagk\"} 3\n"
	for _, w := range []string{want,
		"# HELP tsd_head_series Series in the head.\n# TYPE tsd_head_series gauge\ntsd_head_series 7\n",
		"# HELP tsd_odd_name Quote \" and back\\\\slash.\n# TYPE tsd_odd_name gauge\n" +
			"tsd_odd_name{v=\"a\\\"b\\\\c\\nd\"} 0.5\n",
		"# TYPE go_goroutines gauge\n", "# TYPE process_cpu_seconds_total counter\n",
	} {
		if code != 200 || ctype != contentTypeProm || !strings.Contains(out, w) {
			t.Errorf("/metrics = %d %q\n%s\nlacks\n%s", code, ctype, out, w)
		}
	}
	if code, _, out := do(t, "GET", base+"/api/stats/query", ""); code != 200 || out != `{"completed":[],"running":[]}` {
		t.Errorf("stats/query = %d %s", code, out)
	}
	testStatsPages(t, base)
	// StatsRpc serves its own sub-pages (jvm, query, threads,
	// region_clients) and answers any other path under /api/stats with
	// the stats themselves.
	if code, _, out := do(t, "GET", base+"/api/stats/other", ""); code != 200 || json.Unmarshal([]byte(out), &got) != nil || len(got) != 4 {
		t.Errorf("stats/other = %d %s", code, out)
	}
}

// FuzzMetaRequests sends arbitrary query strings and bodies to the
// metadata endpoints: bad input is a 4xx (or 304), never a 5xx or a panic.
func FuzzMetaRequests(f *testing.F) {
	paths := []string{"/api/search/lookup", "/api/suggest", "/api/uid/assign", "/api/uid/rename", "/api/uid/uidmeta", "/api/config/filters",
		"/api/uid/tsmeta", "/api/search/tsmeta", "/api/search/tsmeta_summary", "/api/search/tsuids", "/api/search/uidmeta"}
	for i, seed := range []struct{ qs, body string }{
		{"m=sys.cpu.user{host=*}", ""}, {"type=metrics&q=sys&max=3", ""}, {"metric=a,b,,c", ""},
		{"metric=sys.mem&name=x", ""}, {"uid=000001&type=metric", ""}, {"", `{"metric":"m","tags":[{"key":"k"}]}`},
		{"m={=}", ""}, {"m=%7B%7D", ""}, {"uid=zz&type=tagv&method_override=delete", ""}, {"", `{"uid":"1","type":"tagk","custom":{"a":1}}`},
		{"type=tagv&max=-1", ""}, {"", `{"type":"metrics","max":1e99}`}, {"", `{"metric":[1]}`},
		{"tsuid=000001000001000001", ""}, {"m=sys.cpu.user{host=web01,dc=lga}&create=true", `{"max":"NaN","retention":"3"}`},
		{"query=sys.*{host=web0*}&limit=2&start_index=1", ""}, {"", `{"query":"*{*=lga}","limit":"1","startIndex":2}`},
	} {
		f.Add(uint8(i), seed.qs, seed.body)
	}
	m := newMetaStack(f, Options{})
	f.Fuzz(func(t *testing.T, which uint8, qs, body string) {
		method := "GET"
		if body != "" {
			method = "POST"
		}
		path := paths[int(which)%len(paths)] + "?" + qs
		req, err := http.NewRequest(method, m.base+path, strings.NewReader(body))
		if err != nil {
			return // not a URL a client could send
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s %q = %d %s", method, path, body, resp.StatusCode, out)
		}
	})
}

// lookupTime is how Jackson writes a whole-millisecond float below 10^7.
var lookupTime = regexp.MustCompile(`^[0-9]+\.0$`)

// testStatsPages: StatsRpc's jvm, threads and region_clients pages in
// OpenTSDB's shapes (StatsRpc.printJVMStats, printThreadStats,
// printRegionClientStats), with the Go runtime's figures.
func testStatsPages(t *testing.T, base string) {
	code, _, out := do(t, "GET", base+"/api/stats/region_clients", "")
	if code != 200 || out != "[]" {
		t.Errorf("stats/region_clients = %d %s", code, out)
	}
	var jvm struct {
		OS      struct{ SystemLoadAverage float64 }
		Runtime struct {
			StartTime, Uptime           int64
			VMName, VMVendor, VMVersion string
		}
		Memory struct {
			HeapMemoryUsage, NonHeapMemoryUsage struct{ Init, Used, Committed, Max int64 }
			ObjectsPendingFinalization          int64
		}
		GC    map[string]struct{ CollectionCount, CollectionTime int64 }
		Pools map[string]struct {
			Usage struct{ Used, Committed int64 }
			Type  string
		}
	}
	code, _, out = do(t, "GET", base+"/api/stats/jvm", "")
	if err := json.Unmarshal([]byte(out), &jvm); code != 200 || err != nil || jvm.Runtime.StartTime <= 0 ||
		jvm.Runtime.VMName != "Go" || !strings.HasPrefix(jvm.Runtime.VMVersion, "go") || jvm.Memory.HeapMemoryUsage.Used <= 0 ||
		jvm.Memory.HeapMemoryUsage.Committed < jvm.Memory.HeapMemoryUsage.Used || jvm.Memory.NonHeapMemoryUsage.Used <= 0 ||
		len(jvm.GC) != 1 || jvm.Pools["heap"].Type != "HEAP" || jvm.Pools["stack"].Usage.Used <= 0 {
		t.Errorf("stats/jvm = %d %s (%v)", code, out, err)
	}
	var threads []struct {
		ThreadID    int64
		Name, State string
		Priority    int
		Interrupted bool
		Stack       []string
	}
	code, _, out = do(t, "GET", base+"/api/stats/threads", "")
	if err := json.Unmarshal([]byte(out), &threads); code != 200 || err != nil || len(threads) < 2 {
		t.Fatalf("stats/threads = %d %.500s (%v)", code, out, err)
	}
	running := false
	for _, th := range threads {
		if th.ThreadID <= 0 || th.Name != "goroutine "+strconv.FormatInt(th.ThreadID, 10) || th.Priority != 5 || len(th.Stack) == 0 ||
			!slices.Contains([]string{"NEW", "RUNNABLE", "BLOCKED", "WAITING", "TIMED_WAITING", "TERMINATED"}, th.State) {
			t.Errorf("thread %+v", th)
		}
		// The goroutine answering is running in the handler.
		running = running || th.State == "RUNNABLE" && strings.Contains(strings.Join(th.Stack, "\n"), "appendGoroutines")
	}
	if !running {
		t.Errorf("no running goroutine in appendGoroutines: %.2000s", out)
	}
}
