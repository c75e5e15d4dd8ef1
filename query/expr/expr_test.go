package expr_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/expr"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

var quiet = slog.New(slog.DiscardHandler)

// t0 is the first point's time (s); points are a minute apart.
const t0 = int64(1_700_000_040)

// newEngine is opentsdb.Engine over the real write path (points stay in the
// head) holding:
//
//	cpu.user{host=a,dc=x}: 1 2 3 at t0, t0+60, t0+120
//	cpu.user{host=b,dc=x}: 10 20 30
//	cpu.sys{host=a,dc=x}:  5 at t0, 7 at t0+120 (none at t0+60)
//	cpu.sys{host=b,dc=x}:  100 200 300
//	cpu.idle{host=a}:      50 50 50
func newEngine(t *testing.T) *opentsdb.Engine {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := tsdpebble.Open(filepath.Join(dir, "db"), &tsdpebble.Options{Logger: quiet, GCInterval: -1})
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
	u, err := uid.New(uids, &uid.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(ctx, meta, u, &index.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	h, err := head.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &head.HeadOptions{Registrar: ix, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	app := h.NameAppender(u, 0)
	put := func(metric string, tags []string, sec, v int64) {
		var ts []uid.Tag
		for i := 0; i < len(tags); i += 2 {
			ts = append(ts, uid.Tag{Key: []byte(tags[i]), Value: []byte(tags[i+1])})
		}
		if _, err := app.Append(ctx, []byte(metric), ts, series.IntPoint(sec*1000, v)); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range []int64{1, 2, 3} {
		put("cpu.user", []string{"host", "a", "dc", "x"}, t0+int64(i)*60, v)
		put("cpu.user", []string{"host", "b", "dc", "x"}, t0+int64(i)*60, 10*v)
		put("cpu.sys", []string{"host", "b", "dc", "x"}, t0+int64(i)*60, 100*v)
		put("cpu.idle", []string{"host", "a"}, t0+int64(i)*60, 50)
	}
	put("cpu.sys", []string{"host", "a", "dc", "x"}, t0, 5)
	put("cpu.sys", []string{"host", "a", "dc", "x"}, t0+120, 7)
	if err := app.Commit(false); err != nil {
		t.Fatal(err)
	}
	r, err := read.New(&read.Options{Data: data, Layout: rowkey.DefaultLayout(), Head: h, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	e, err := opentsdb.New(&opentsdb.Options{Reader: r, UIDs: u, Index: ix, Logger: quiet,
		Now: func() time.Time { return time.Unix(t0+3600, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func run(t *testing.T, e *opentsdb.Engine, body string) (string, error) {
	t.Helper()
	q, err := expr.Parse([]byte(body))
	if err != nil {
		return "", err
	}
	res, err := expr.Run(context.Background(), e, q)
	if err != nil {
		return "", err
	}
	whole := string(res.AppendJSON(nil))
	// Written in parts, a row at least each, the bytes are the same.
	for _, max := range []int{1, 10, 100} {
		var c expr.JSONCursor
		var got, part []byte
		for done := false; !done; {
			part, done = res.AppendJSONPart(part[:0], &c, max)
			got = append(got, part...)
		}
		if string(got) != whole {
			t.Errorf("in parts of %d:\n%s\nwhole:\n%s", max, got, whole)
		}
	}
	return whole, nil
}

const filters = `"filters":[{"id":"f1","tags":[{"type":"wildcard","tagk":"host","filter":"*","groupBy":true}]}]`

func body(metrics, exprs, outputs string) string {
	return fmt.Sprintf(`{"time":{"start":"%d","end":"%d","aggregator":"sum"},%s,"metrics":[%s],"expressions":[%s],"outputs":[%s]}`,
		t0, t0+600, filters, metrics, exprs, outputs)
}

// TestExpression: a + b*2 per host, the missing sys point of host a at
// t0+60 filled with zero by the metric's policy; values written out from
// the puts above.
func TestExpression(t *testing.T) {
	e := newEngine(t)
	metrics := `{"id":"a","metric":"cpu.user","filter":"f1"},{"id":"b","metric":"cpu.sys","filter":"f1","fillPolicy":{"policy":"zero"}}`
	b := body(metrics, `{"id":"e","expr":"a + b * 2"}`, `{"id":"e","alias":"load"}`)
	got, err := run(t, e, b)
	if err != nil {
		t.Fatal(err)
	}
	ms := func(i int64) int64 { return (t0 + 60*i) * 1000 }
	// host a: 1+10, 2+0, 3+14; host b: 10+200, 20+400, 30+600.
	want := fmt.Sprintf(`{"outputs":[{"id":"e","alias":"load","dps":[[%d,11.0,210.0],[%d,2.0,420.0],[%d,17.0,630.0]],`+
		`"dpsMeta":{"firstTimestamp":%d,"lastTimestamp":%d,"setCount":3,"series":2},`+
		`"meta":[{"index":0,"metrics":["timestamp"]},`+
		`{"index":1,"metrics":["cpu.sys","cpu.user"],"commonTags":{"dc":"x","host":"a"},"aggregatedTags":[]},`+
		`{"index":2,"metrics":["cpu.sys","cpu.user"],"commonTags":{"dc":"x","host":"b"},"aggregatedTags":[]}]}],"query":%s}`,
		ms(0), ms(1), ms(2), ms(0), ms(2), b)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestJoins: intersection drops keys one side lacks; useQueryTags pairs
// series whose other tags differ, and without it they do not pair (union:
// NaN for the side missing); a total (no group-by tag) pairs with every
// key; a timeOffset shifts a metric's points forward; without a fill
// policy a missing point is NaN.
func TestJoins(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		name, metrics, expr string
		want                string // the dps
	}{
		{"intersection", `{"id":"a","metric":"cpu.user","filter":"f1"},{"id":"c","metric":"cpu.idle","filter":"f1"}`,
			`{"id":"e","expr":"c - a","join":{"operator":"intersection","useQueryTags":true}}`, `[[%d,49.0],[%d,48.0],[%d,47.0]]`},
		{"union without query tags", `{"id":"a","metric":"cpu.user","filter":"f1"},{"id":"c","metric":"cpu.idle","filter":"f1"}`,
			`{"id":"e","expr":"c - a","join":{"operator":"union"}}`,
			`[[%d,"NaN","NaN","NaN"],[%d,"NaN","NaN","NaN"],[%d,"NaN","NaN","NaN"]]`},
		{"total pairs with all", `{"id":"a","metric":"cpu.user","filter":"f1"},{"id":"s","metric":"cpu.user"}`,
			`{"id":"e","expr":"a / s * 100","join":{"useQueryTags":true}}`, `[[%d,9.090909090909092,90.9090909090909],[%d,9.090909090909092,90.9090909090909],[%d,9.090909090909092,90.9090909090909]]`},
		{"time offset", `{"id":"a","metric":"cpu.user","filter":"f1"},{"id":"p","metric":"cpu.user","filter":"f1","timeOffset":"1m"}`,
			`{"id":"e","expr":"a - p"}`, `[[%d,"NaN","NaN"],[%d,1.0,10.0],[%d,1.0,10.0],[%d,"NaN","NaN"]]`},
		{"NaN fill", `{"id":"b","metric":"cpu.sys","filter":"f1"}`, `{"id":"e","expr":"b + 1"}`,
			`[[%d,6.0,101.0],[%d,"NaN",201.0],[%d,8.0,301.0]]`},
	} {
		got, err := run(t, e, body(tc.metrics, tc.expr, `{"id":"e"}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		times := []any{t0 * 1000, (t0 + 60) * 1000, (t0 + 120) * 1000, (t0 + 180) * 1000}
		want := `"dps":` + fmt.Sprintf(tc.want, times[:strings.Count(tc.want, "%d")]...) + `,`
		if !strings.Contains(got, want) {
			t.Errorf("%s: got\n%s\nwant dps %s", tc.name, got, want)
		}
	}
}

// TestOutputsDefault: without outputs every expression is returned; with
// neither outputs nor expressions every metric is; an output with no
// series has no meta.
func TestOutputsDefault(t *testing.T) {
	e := newEngine(t)
	got, err := run(t, e, fmt.Sprintf(`{"time":{"start":"%d","end":"%d","aggregator":"sum"},"metrics":[{"id":"a","metric":"cpu.user"},{"id":"n","metric":"cpu.idle","filter":"f2"}],"filters":[{"id":"f2","tags":[{"type":"regexp","tagk":"host","filter":"^zzz$"}]}]}`, t0, t0+600))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"outputs":[{"id":"a","dps":[[%d,11.0],[%d,22.0],[%d,33.0]],"dpsMeta":{"firstTimestamp":%d,"lastTimestamp":%d,"setCount":3,"series":1},`+
		`"meta":[{"index":0,"metrics":["timestamp"]},{"index":1,"metrics":["cpu.user"],"commonTags":{"dc":"x"},"aggregatedTags":["host"]}]},`+
		`{"id":"n","dps":[],"dpsMeta":{"firstTimestamp":0,"lastTimestamp":0,"setCount":0,"series":0}}]`,
		t0*1000, (t0+60)*1000, (t0+120)*1000, t0*1000, (t0+120)*1000)
	if !strings.HasPrefix(got, want) {
		t.Errorf("got\n%s\nwant prefix\n%s", got, want)
	}
}

// TestBadQueries: refusals are *tsquery.Error with OpenTSDB's messages
// (pojo.Query.validate and the parts' validate methods, v2.4.1), a part's
// own message in the details as OpenTSDB's wrapped cause.
func TestBadQueries(t *testing.T) {
	e := newEngine(t)
	tm := fmt.Sprintf(`"time":{"start":"%d","aggregator":"sum"}`, t0)
	for _, tc := range []struct{ body, want, details string }{
		{``, "Missing message content", "Supply valid JSON formatted data in the body of your request"},
		{`{"time":`, "Unable to parse the given JSON", "unexpected end of JSON input"},
		{`{"metrics":[{"id":"a","metric":"m"}]}`, "missing time", ""},
		{`{"time":{"aggregator":"sum"},"metrics":[{"id":"a","metric":"m"}]}`, "Invalid time", "missing or empty start"},
		{`{"time":{"start":"1h-ago"},"metrics":[{"id":"a","metric":"m"}]}`, "Invalid time", "Missing or empty aggregator"},
		{`{"time":{"start":"1h-ago","aggregator":"nope"},"metrics":[{"id":"a","metric":"m"}]}`, "Invalid time", "Invalid aggregator"},
		{`{"time":{"start":"1h-ago","aggregator":"SUM","downsampler":{"aggregator":"avg"}},"metrics":[{"id":"a","metric":"m"}]}`, "Invalid time", "Missing or empty interval"},
		{`{"time":{"start":"1h-ago","aggregator":"sum","downsampler":{"interval":"1m"}},"metrics":[{"id":"a","metric":"m"}]}`, "Invalid time", "Missing or empty aggregator"},
		{`{` + tm + `}`, "missing or empty metrics", ""},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"},{"id":"a","metric":"cpu.sys"}]}`, "duplicated metric id: a", ""},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"},{"id":"b"}]}`, "Invalid metric at index 1", "missing or empty metric"},
		{`{` + tm + `,"metrics":[{"metric":"cpu.user"}]}`, "Invalid metric at index 0", "missing or empty id"},
		{`{` + tm + `,"metrics":[{"id":"a-b","metric":"cpu.user"}]}`, "Invalid metric at index 0", `Invalid id ("a-b"): illegal character: -`},
		{`{` + tm + `,"metrics":[{"id":"7","metric":"cpu.user"}]}`, "Invalid metric at index 0", "The ID cannot be an integer"},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user","aggregator":"nope"}]}`, "Invalid metric at index 0", "Invalid aggregator"},
		{`{` + tm + `,"filters":[{"tags":[]}],"metrics":[{"id":"a","metric":"cpu.user"}]}`, "Invalid filter at index 0", "Missing or empty id"},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"}],"expressions":[{"id":"e"}]}`, "Invalid expression at index 0", "missing or empty expr"},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"}],"expressions":[{"id":"a","expr":"a"}]}`, "Duplicated variable or expression id: a", ""},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user","filter":"nope"}]}`, "unrecognized filter id nope in metric a", ""},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"}],"expressions":[{"id":"e","expr":"a + z"}]}`, "Expression [a + z] was missing input z", ""},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"}],"expressions":[{"id":"e","expr":"a +"}]}`, "Unable to parse expression [a +] at 3: unexpected end", ""},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"}],"expressions":[{"id":"e","expr":"e + a"}]}`, "Circular reference in expression e", ""},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"nope"}]}`, "No such name for 'metrics': 'nope'", "*"},
		{`{` + tm + `,"metrics":[{"id":"a","metric":"cpu.user"}],"outputs":[{"id":"q"}]}`, "Output id not found: q", ""},
	} {
		_, err := run(t, e, tc.body)
		var te *tsquery.Error
		if !errors.As(err, &te) || te.Msg != tc.want || te.Details != tc.details && tc.details != "*" {
			t.Errorf("%s: %v, want a *tsquery.Error %q, details %q", tc.body, err, tc.want, tc.details)
		}
	}
}
