package api

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zone tests run on machines without a zone database

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// annotationServer runs a Server whose annotation store is noteStore's.
func annotationServer(t *testing.T) string {
	t.Helper()
	// OpenTSDB's GET forms (method_override) need tsd.http.allow_state_changing_get.
	_, base := startServer(t, Options{Annotations: noteStore(t), AllowStateChangingGET: true})
	return base
}

// noteStore is an annotation store on a real pebble data table in a temp
// dir (salt width 1, 20 buckets).
func noteStore(t *testing.T) *annotation.Store {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tbl, err := storage.EnsureTables(context.Background(), db, schema.DataTableSpec(schema.DefaultDataTable))
	if err != nil {
		t.Fatal(err)
	}
	l := rowkey.Layout{Widths: series.DefaultWidths(), Salt: salt.Default(), MaxTags: 8}
	store, err := annotation.NewStore(annotation.Options{Table: tbl[0], Layout: &l})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

type annCase struct {
	method, path, body string
	code               int
	want               string // exact body, or a substring when prefixed with "~"
}

func runAnnCases(t *testing.T, base string, cases []annCase) {
	t.Helper()
	for _, c := range cases {
		code, _, body := do(t, c.method, base+c.path, c.body)
		ok := code == c.code
		if w, sub := strings.CutPrefix(c.want, "~"); sub {
			ok = ok && strings.Contains(body, w)
		} else {
			ok = ok && body == c.want
		}
		if !ok {
			t.Errorf("%s %s %s\n = %d %s\nwant %d %s", c.method, c.path, c.body, code, body, c.code, c.want)
		}
	}
}

const (
	ts1     = "000001000001000001"
	errJSON = `{"error":{"code":`
)

func TestAnnotationSingle(t *testing.T) {
	base := annotationServer(t)
	runAnnCases(t, base, []annCase{
		{"GET", "/api/annotation?tsuid=" + ts1 + "&start_time=1388450562", "", 404,
			errJSON + `404,"message":"Unable to locate annotation in storage"}}`},
		{"GET", "/api/annotation?tsuid=" + ts1, "", 400, errJSON + `400,"message":"Missing start time"}}`},
		{"GET", "/api/annotation?tsuid=" + ts1 + "&start_time=1388450562&description=Boo&method_override=post", "", 200,
			`{"tsuid":"000001000001000001","description":"Boo","notes":"","startTime":1388450562,"endTime":0}`},
		// POST merges: the description stays.
		{"POST", "/api/annotation", `{"tsuid":"` + ts1 + `","startTime":1388450562,"notes":"My Notes","custom":{"owner":"ops"}}`, 200,
			`{"tsuid":"000001000001000001","description":"Boo","notes":"My Notes","custom":{"owner":"ops"},"startTime":1388450562,"endTime":0}`},
		{"GET", "/api/v1/annotation?tsuid=" + ts1 + "&start_time=1388450562", "", 200,
			`{"tsuid":"000001000001000001","description":"Boo","notes":"My Notes","custom":{"owner":"ops"},"startTime":1388450562,"endTime":0}`},
		// Nothing set: 304.
		{"GET", "/api/annotation?tsuid=" + ts1 + "&start_time=1388450562&method_override=post", "", 304, ""},
		// PUT replaces.
		{"PUT", "/api/annotation", `{"tsuid":"` + ts1 + `","startTime":1388450562,"description":"New"}`, 200,
			`{"tsuid":"000001000001000001","description":"New","notes":"","startTime":1388450562,"endTime":0}`},
		{"DELETE", "/api/annotation?tsuid=" + ts1 + "&start_time=1388450562", "", 204, ""},
		{"GET", "/api/annotation?tsuid=" + ts1 + "&start_time=1388450562", "", 404, "~Unable to locate annotation"},
		// Global notes, through the alias.
		{"POST", "/api/annotations?start_time=1328140800&description=G", "", 200,
			`{"tsuid":"","description":"G","notes":"","startTime":1328140800,"endTime":0}`},
		{"GET", "/api/annotation?start_time=2012/02/02-00:00:00", "", 200, `~"description":"G"`},
		{"GET", "/api/annotation?start_time=1328140800&method_override=delete", "", 204, ""},
	})
}

func TestAnnotationBadInput(t *testing.T) {
	base := annotationServer(t)
	runAnnCases(t, base, []annCase{
		{"TRACE", "/api/annotation?start_time=1", "", 405, errJSON + `405,"message":"Method not allowed",` +
			`"details":"The HTTP method [TRACE] is not permitted for this endpoint"}}`},
		{"GET", "/api/annotation?start_time=1&method_override=bogus", "", 405, "~Unknown or unsupported method override value"},
		{"POST", "/api/annotation", `{"startTime":`, 400, "~" + errJSON + `400,"message":"Unable to parse the given JSON"`},
		// Annotation.syncToStorage's IllegalArgumentException, wrapped by
		// AnnotationRpc as BadRequestException(e): its message twice.
		{"POST", "/api/annotation", `{"description":"x"}`, 400,
			errJSON + `400,"message":"The start timestamp has not been set","details":"The start timestamp has not been set"}}`},
		{"PUT", "/api/annotation", `{"description":"x"}`, 400,
			errJSON + `400,"message":"The start timestamp has not been set","details":"The start timestamp has not been set"}}`},
		{"POST", "/api/annotation", `{"tsuid":"0001","startTime":5,"description":"x"}`, 400, `~Invalid TSUID`},
		{"POST", "/api/annotation", `{"tsuid":"zz","startTime":5,"description":"x"}`, 400, `~Invalid TSUID`},
		{"GET", "/api/annotation?start_time=notatime", "", 400, "~" + errJSON + `400,"message":"Invalid time: notatime`},
		{"GET", "/api/annotation?start_time=99999999999999999999", "", 400, "~" + errJSON + `400,"message":"Invalid time`},
		{"POST", "/api/annotation", `{"startTime":99999999999999,"description":"x"}`, 400, `~past the last storable time`},
		{"DELETE", "/api/annotation", `{"description":"x"}`, 400,
			errJSON + `400,"message":"Unable to delete Annotation information","details":"The start timestamp has not been set"}}`},
		{"GET", "/api/annotation/bulk", "", 405, "~Method not allowed"},
		{"POST", "/api/annotation/bulk", "", 400, errJSON + `400,"message":"Missing message content",` +
			`"details":"Supply valid JSON formatted data in the body of your request"}}`},
		{"POST", "/api/annotation/bulk", "Not a json object", 400, "~Unable to parse the given JSON"},
		{"POST", "/api/annotation/bulk", `{"tsuid":"` + ts1 + `","startTime":1,"description":"Boo"}`, 400, "~Unable to parse the given JSON"},
		{"POST", "/api/annotation/bulk", `[{"startTime":1,"description":"a"},{"tsuid":"` + ts1 + `","description":"Gum"}]`, 400,
			errJSON + `400,"message":"The start timestamp has not been set","details":"Annotation error: TSUID: 000001000001000001 Start: 0  Description: Gum"}}`},
		{"DELETE", "/api/annotation/bulk?tsuids=" + ts1 + "&end_time=1388450562000", "", 400, "~Missing parameter <code>start_time</code>"},
		{"DELETE", "/api/annotation/bulk?start_time=1388450562000", "", 400, "~Missing the TSUIDs or global annotations flag"},
		{"DELETE", "/api/annotation/bulk?start_time=1388450562000&tsuids=", "", 400, "~Invalid TSUID"},
		// executeBulkDelete wraps DateTime's IllegalArgumentException as
		// BadRequestException(e): the message twice.
		{"DELETE", "/api/annotation/bulk?start_time=xyz&global", "", 400, errJSON +
			`400,"message":"Invalid time: xyz. Invalid character 'x' in xyz","details":"Invalid time: xyz. Invalid character 'x' in xyz"}}`},
		{"DELETE", "/api/annotation/bulk", `{"global":true,"startTime":"1h-ago","endTime":"bad"}`, 400, errJSON +
			`400,"message":"Invalid time: bad. Invalid character 'b' in bad","details":"Invalid time: bad. Invalid character 'b' in bad"}}`},
		{"DELETE", "/api/annotation/bulk", `{"tsuids":["` + ts1 + `"],"endTime":"1388450562000"}`, 400, "~Missing the start time value"},
		{"DELETE", "/api/annotation/bulk", `{"startTime":"1328140799000","endTime":"1328140800000"}`, 400, "~Missing the TSUIDs or global annotations flag"},
		{"DELETE", "/api/annotation/bulk", `{thisisnotjson}`, 400, "~Unable to parse the given JSON"},
		{"DELETE", "/api/annotation/bulk", `{"global":true,"startTime":"2000","endTime":"1000"}`, 400,
			"~The end timestamp cannot be less than the start timestamp"},
	})
}

func TestAnnotationBulk(t *testing.T) {
	base := annotationServer(t)
	ts2 := "000001000001000002"
	runAnnCases(t, base, []annCase{
		{"POST", "/api/annotation/bulk", `[{"tsuid":"` + ts1 + `","startTime":1388450562,"description":"Boo","notes":"My Notes"},` +
			`{"tsuid":"` + ts2 + `","startTime":1388450562,"description":"Gum"},{"startTime":1388450563}]`, 200,
			`[{"tsuid":"000001000001000001","description":"Boo","notes":"My Notes","startTime":1388450562,"endTime":0},` +
				`{"tsuid":"000001000001000002","description":"Gum","notes":"","startTime":1388450562,"endTime":0}]`},
		{"PUT", "/api/annotations/bulk", `[{"tsuid":"` + ts1 + `","startTime":1388450562,"description":"Boo2"}]`, 200,
			`[{"tsuid":"000001000001000001","description":"Boo2","notes":"","startTime":1388450562,"endTime":0}]`},
		{"POST", "/api/annotation/bulk", `[{"startTime":1328140800,"description":"G1"},{"startTime":1328140801,"description":"G2"}]`, 200, `~"G2"`},
		{"DELETE", "/api/annotation/bulk", `{"tsuids":["` + ts1 + `","` + ts2 + `"],"startTime":"1388450560000","endTime":1388450562000}`, 200,
			`{"tsuids":["000001000001000001","000001000001000002"],"global":false,"startTime":1388450560000,"endTime":1388450562000,"totalDeleted":2}`},
		{"GET", "/api/annotation/bulk?start_time=1328140799000&end_time=1328140800000&global&method_override=delete", "", 200,
			`{"tsuids":null,"global":true,"startTime":1328140799000,"endTime":1328140800000,"totalDeleted":1}`},
		{"GET", "/api/annotation?start_time=1328140801", "", 200, `~"description":"G2"`},
		{"DELETE", "/api/annotation/bulk?start_time=1000000000000&global=true", "", 200, `~"totalDeleted":1}`},
		{"GET", "/api/annotation?start_time=1328140801", "", 404, "~Unable to locate"},
	})
}

// FuzzAnnotationRequest: the request parsers never panic and refuse bad
// input with a 4xx.
func FuzzAnnotationRequest(f *testing.F) {
	f.Add([]byte(`{"tsuid":"000001000001000001","startTime":1388450562,"description":"Boo"}`), "tsuid=00&start_time=1h-ago&end_time=now")
	f.Add([]byte(`{"tsuids":["000001000001000001"],"global":"true","startTime":"1388450560000","endTime":5}`), "start_time=2012/02/02&tsuids=a,b&global")
	f.Add([]byte(`[{"startTime":"x"}]`), "start_time=&description=%ff")
	f.Add([]byte(``), "start_time=1388450562.123&notes=n")
	f.Fuzz(func(t *testing.T, body []byte, qs string) {
		var args fasthttp.Args
		args.Parse(qs)
		check := func(what string, herr *noteError) {
			if herr != nil && (herr.code < 400 || herr.code > 499 || herr.message == "") {
				t.Fatalf("%s: %+v", what, herr)
			}
		}
		_, herr := parseNote(body, &args, 1700000000000, time.UTC)
		check("parseNote", herr)
		_, herr = parseNotes(body)
		check("parseNotes", herr)
		r, herr := parseBulkDeleteBody(body)
		check("parseBulkDeleteBody", herr)
		if herr == nil {
			_ = appendBulkDeleteJSON(nil, &r, 1, 2, 3)
		}
		_, herr = parseBulkDeleteQS(&args)
		check("parseBulkDeleteQS", herr)
		if _, err := url.ParseQuery(qs); err == nil {
			_ = isAnnotationBulkPath([]byte("/" + qs))
		}
	})
}

// TestNoteDatesInDefaultZone: an absolute start_time is read in the
// daemon's zone (tsd.core.timezone), as OpenTSDB reads it in its default.
func TestNoteDatesInDefaultZone(t *testing.T) {
	denver, err := time.LoadLocation("America/Denver")
	if err != nil {
		t.Fatal(err) // time/tzdata is linked in: never missing
	}
	var args fasthttp.Args
	args.Parse("start_time=2024/01/02-00:00:00&end_time=2024/01/02-01:00:00")
	for _, c := range []struct {
		loc  *time.Location
		want int64
	}{{time.UTC, 1704153600}, {denver, 1704153600 + 7*3600}} {
		n, herr := parseNote(nil, &args, 1800000000000, c.loc)
		if herr != nil {
			t.Fatal(herr)
		}
		if n.StartTime != c.want || n.EndTime != c.want+3600 {
			t.Errorf("%s: start %d end %d, want %d and %d", c.loc, n.StartTime, n.EndTime, c.want, c.want+3600)
		}
	}
}
