package api

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/query/last"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// readStack is the real write path (head with its series registered in a
// real index, pebble store) and a reader over it.
type readStack struct {
	w  *service.Writer
	r  *read.Reader
	ix *index.Index
	u  *uid.UIDs
}

func newReadStack(t *testing.T) *readStack { return newReadStackWith(t, read.Options{}) }

// newReadStackWith is newReadStack with the reader's options (Data,
// Layout, Head and Logger are set here).
func newReadStackWith(t testing.TB, ro read.Options) *readStack {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	log := quietLog()
	db, err := pebble.Open(dir, &pebble.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tbl, err := storage.EnsureTables(ctx, db, schema.DataTableSpec(schema.DefaultDataTable),
		uid.TableSpec(uid.DefaultTable), schema.MetaTableSpec(schema.DefaultMetaTable))
	if err != nil {
		t.Fatal(err)
	}
	data, uids, meta := tbl[0], tbl[1], tbl[2]
	st := &readStack{}
	if st.u, err = uid.New(uids, &uid.Options{Logger: log}); err != nil {
		t.Fatal(err)
	}
	if st.ix, err = index.Open(ctx, meta, st.u, &index.Options{Logger: log}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.ix.Close() })
	h, err := head.OpenHead(db.FS(), dir+"/wal", &head.HeadOptions{Logger: log, Registrar: st.ix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if st.w, err = service.NewWriter(service.Options{UIDs: st.u, Head: h, Logger: log}); err != nil {
		t.Fatal(err)
	}
	ro.Data, ro.Layout, ro.Head, ro.Logger = data, rowkey.DefaultLayout(), h, log
	if st.r, err = read.New(&ro); err != nil {
		t.Fatal(err)
	}
	return st
}

// newLastServer is a server whose /api/put writes through the real head
// and whose /api/query/last reads it.
func newLastServer(t *testing.T) string {
	t.Helper()
	st := newReadStack(t)
	now := time.Unix(1_700_003_000, 0)
	svc, err := last.New(&last.Options{Reader: st.r, Index: st.ix, UIDs: st.u, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	_, base := startServer(t, Options{Ingest: st.w, Last: svc})
	return base
}

func TestQueryLast(t *testing.T) {
	base := newLastServer(t)
	put := `[{"metric":"sys.cpu","timestamp":1700000000,"value":5,"tags":{"host":"web01"}},` +
		`{"metric":"sys.cpu","timestamp":1700000010,"value":6.25,"tags":{"host":"web01"}},` +
		`{"metric":"sys.cpu","timestamp":1700000005,"value":7,"tags":{"host":"web02"}}]`
	if code, _, body := do(t, "POST", base+"/api/put?sync", put); code != 204 {
		t.Fatalf("put: %d %s", code, body)
	}
	// TSUIDs: metric 000001, host 000001, web01 000001 / web02 000002.
	web01 := `{"timestamp":1700000010000,"value":"6.25","tsuid":"000001000001000001"}`
	web02 := `{"timestamp":1700000005000,"value":"7","tsuid":"000001000001000002"}`
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/api/query/last?timeseries=" + url.QueryEscape("sys.cpu{host=web01}"), "", 200, "[" + web01 + "]"},
		{"GET", "/api/v1/query/last?timeseries=sys.cpu&back_scan=0", "", 200, "[" + web01 + "," + web02 + "]"},
		{"GET", "/api/query/last?timeseries=" + url.QueryEscape("sys.cpu{host=web02}") + "&back_scan=2", "", 200, "[" + web02 + "]"},
		{"GET", "/api/query/last?timeseries=sys.cpu&back_scan=2", "", 400, lastErrJSON(400, "Tags cannot be null or empty when getting a TSUID", "")},
		{"GET", "/api/query/last?tsuids=000001000001000002&resolve", "", 200,
			`[{"metric":"sys.cpu","timestamp":1700000005000,"value":"7","tags":{"host":"web02"},"tsuid":"000001000001000002"}]`},
		{"POST", "/api/query/last", `{"queries":[{"metric":"sys.cpu","tags":{"host":"web02"}}],"backScan":1}`, 200, "[" + web02 + "]"},
		{"GET", "/api/query/last?method_override=post", `{"queries":[{"tsuids":["000001000001000001"]}]}`, 200, "[" + web01 + "]"},
		{"GET", "/api/query/last?timeseries=nope", "", 400, lastErrJSON(400, "No such name for 'metrics': 'nope'", "")},
		{"GET", "/api/query/last?resolve", "", 400, lastErrJSON(400, "Missing sub queries", "")},
		{"GET", "/api/query/last?timeseries=sys.cpu&back_scan=x", "", 400, lastErrJSON(400, "Unable to parse back_scan parameter", "")},
		{"GET", "/api/query/last?timeseries=" + url.QueryEscape("sys.cpu{host"), "", 400, lastErrJSON(400, "Missing '}' at the end of: sys.cpu{host", "")},
		{"POST", "/api/query/last", `{"queries":`, 400, ""},
		{"PUT", "/api/query/last", "", 405, ""},
	} {
		code, ctype, body := do(t, tc.method, base+tc.path, tc.body)
		if code != tc.code || (tc.want != "" && body != tc.want) || ctype != contentTypeJSON {
			t.Errorf("%s %s: %d %q %s\nwant %d %s", tc.method, tc.path, code, ctype, body, tc.code, tc.want)
		}
	}
}

func lastErrJSON(code int, msg, details string) string {
	return string(appendError(nil, code, msg, details))
}

func TestQueryLastNotWired(t *testing.T) {
	_, base := startServer(t, Options{})
	code, _, body := do(t, "GET", base+"/api/query/last?timeseries=a", "")
	if want := lastErrJSON(501, "Endpoint not implemented: /api/query/last", ""); code != 501 || body != want {
		t.Errorf("got %d %s, want 501 %s", code, body, want)
	}
}
