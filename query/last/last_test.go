package last_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/last"
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

// h0 is a whole hour; hr an hour in ms.
const (
	h0 = int64(1_700_000_000_000) - 1_700_000_000_000%3_600_000
	hr = int64(3_600_000)
)

// fixture is the real write path (UIDs, index, head, flusher on pebble)
// with a last.Service over it whose clock the test sets.
type fixture struct {
	uids  *uid.UIDs
	index *index.Index
	head  *head.Head
	flush *flush.Flusher
	app   *head.NameAppender
	svc   *last.Service
	now   int64
}

func newFixture(t testing.TB) *fixture {
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
	f := &fixture{}
	if f.uids, err = uid.New(uids, &uid.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	if f.index, err = index.Open(ctx, meta, f.uids, &index.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.index.Close() })
	if f.head, err = head.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &head.HeadOptions{Registrar: f.index, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.head.Close() })
	layout := rowkey.DefaultLayout()
	if f.flush, err = flush.NewFlusher(f.head, &flush.FlushOptions{Table: data, Meta: meta, Layout: &layout, WriterID: 3}); err != nil {
		t.Fatal(err)
	}
	f.app = f.head.NameAppender(f.uids, 0)
	r, err := read.New(&read.Options{Data: data, Layout: layout, Head: f.head, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	f.svc, err = last.New(&last.Options{Reader: r, Index: f.index, UIDs: f.uids, Now: func() time.Time { return time.UnixMilli(f.now) }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) put(t testing.TB, host string, p series.Point) {
	t.Helper()
	tags := []uid.Tag{{Key: []byte("dc"), Value: []byte("lga")}, {Key: []byte("host"), Value: []byte(host)}}
	if _, err := f.app.Append(context.Background(), []byte("sys.cpu"), tags, p); err != nil {
		t.Fatal(err)
	}
	if err := f.app.Commit(false); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) flushAll(t testing.TB) {
	t.Helper()
	if _, err := f.flush.Flush(context.Background(), time.Now(), true); err != nil {
		t.Fatal(err)
	}
}

// answer runs q and returns the JSON answer.
func (f *fixture) answer(t *testing.T, q *last.Query) string {
	t.Helper()
	pts, err := f.svc.Last(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return string(last.AppendJSON(nil, pts))
}

// TestLast: web01 has flushed rows in hours 0..2; web02 a flushed row in
// hour 1 and a newer point still in the head (hour 3). The answers below
// are written out from those puts.
func TestLast(t *testing.T) {
	f := newFixture(t)
	for i := range int64(3) {
		f.put(t, "web01", series.IntPoint(h0+i*hr+1000, 10+i))
		f.put(t, "web01", series.IntPoint(h0+i*hr+2000, 20+i))
	}
	f.put(t, "web02", series.IntPoint(h0+hr+5000, -7))
	f.flushAll(t)
	f.put(t, "web02", series.Float64Point(h0+3*hr+500, 2.5))
	f.now = h0 + 3*hr + 1_800_000
	web01, web02 := f.tsuidHex(t, "web01"), f.tsuidHex(t, "web02")
	p01 := fmt.Sprintf(`{"timestamp":%d,"value":"22","tsuid":"%s"}`, h0+2*hr+2000, web01)
	p02 := fmt.Sprintf(`{"timestamp":%d,"value":"2.5","tsuid":"%s"}`, h0+3*hr+500, web02)
	metricQ := func(backScan int, tags ...last.Tag) *last.Query {
		return &last.Query{BackScan: backScan, Queries: []last.SubQuery{{Metric: "sys.cpu", Tags: tags}}}
	}
	for _, tc := range []struct {
		name string
		q    *last.Query
		want string
	}{
		{"index spans", metricQ(0), "[" + p01 + "," + p02 + "]"},
		{"tag filter", metricQ(0, last.Tag{Key: "host", Value: "web02"}), "[" + p02 + "]"},
		{"back_scan 1 reaches hour 2", metricQ(1, last.Tag{Key: "dc", Value: "lga"}, last.Tag{Key: "host", Value: "web01"}), "[" + p01 + "]"},
		// With a back_scan the tags name one series exactly
		// (TSUIDQuery.tsuidFromMetric): {host=web02} is not {dc=lga,host=web02}.
		{"back_scan needs every tag", metricQ(1, last.Tag{Key: "host", Value: "web02"}), "[]"},
		{"tsuids", &last.Query{Queries: []last.SubQuery{{TSUIDs: []string{web02, web01}}}}, "[" + p02 + "," + p01 + "]"},
		{"each series once", &last.Query{Queries: []last.SubQuery{{TSUIDs: []string{web01}}, {Metric: "sys.cpu"}}}, "[" + p01 + "," + p02 + "]"},
		{"resolve", &last.Query{ResolveNames: true, Queries: []last.SubQuery{{TSUIDs: []string{web01}}}},
			fmt.Sprintf(`[{"metric":"sys.cpu","timestamp":%d,"value":"22","tags":{"dc":"lga","host":"web01"},"tsuid":"%s"}]`, h0+2*hr+2000, web01)},
	} {
		if got := f.answer(t, tc.q); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// Five hours on, back_scan 1 covers hours 7 and 8: nothing; back_scan
	// 5 reaches web02's head point.
	f.now = h0 + 8*hr
	exact02 := []last.Tag{{Key: "dc", Value: "lga"}, {Key: "host", Value: "web02"}}
	if got := f.answer(t, metricQ(1, exact02...)); got != "[]" {
		t.Errorf("back_scan 1 at hour 8: %s, want []", got)
	}
	if got := f.answer(t, metricQ(5, exact02...)); got != "["+p02+"]" {
		t.Errorf("back_scan 5 at hour 8: %s, want [%s]", got, p02)
	}
}

func (f *fixture) tsuidHex(t *testing.T, host string) string {
	t.Helper()
	tags := []uid.Tag{{Key: []byte("dc"), Value: []byte("lga")}, {Key: []byte("host"), Value: []byte(host)}}
	key, err := f.uids.ResolvePoint(context.Background(), nil, []byte("sys.cpu"), tags)
	if err != nil {
		t.Fatal(err)
	}
	return string(rowkey.AppendTSUIDHex(nil, key))
}

// TestLastErrors: unknown names and bad TSUIDs are 400s with OpenTSDB's
// messages; too many series is a limit error.
func TestLastErrors(t *testing.T) {
	f := newFixture(t)
	f.put(t, "web01", series.IntPoint(h0, 1))
	f.now = h0
	for _, tc := range []struct {
		sq   last.SubQuery
		want string
	}{
		{last.SubQuery{Metric: "nope"}, "No such name for 'metrics': 'nope'"},
		{last.SubQuery{Metric: "sys.cpu", Tags: []last.Tag{{Key: "rack", Value: "r1"}}}, "No such name for 'tagk': 'rack'"},
		{last.SubQuery{Metric: "sys.cpu", Tags: []last.Tag{{Key: "host", Value: "web99"}}}, "No such name for 'tagv': 'web99'"},
		{last.SubQuery{TSUIDs: []string{"00000"}}, "Invalid TSUID: 00000"},
		{last.SubQuery{TSUIDs: []string{"0000010000"}}, "Invalid TSUID: 0000010000"},
		{last.SubQuery{TSUIDs: []string{"zz0001"}}, "Invalid TSUID: zz0001"},
	} {
		_, err := f.svc.Last(context.Background(), &last.Query{Queries: []last.SubQuery{tc.sq}})
		var te *tsquery.Error
		if !errors.As(err, &te) || te.Msg != tc.want {
			t.Errorf("%+v: %v, want a *tsquery.Error %q", tc.sq, err, tc.want)
		}
	}
	// A back_scan query names one series by its tags (tsuidFromMetric),
	// so it needs some, and every name must exist.
	for _, tc := range []struct {
		sq   last.SubQuery
		want string
	}{
		{last.SubQuery{Metric: "sys.cpu"}, "Tags cannot be null or empty when getting a TSUID"},
		{last.SubQuery{Metric: "sys.cpu", Tags: []last.Tag{{Key: "host", Value: "web99"}}}, "No such name for 'tagv': 'web99'"},
	} {
		_, err := f.svc.Last(context.Background(), &last.Query{BackScan: 2, Queries: []last.SubQuery{tc.sq}})
		var te *tsquery.Error
		if !errors.As(err, &te) || te.Msg != tc.want {
			t.Errorf("%+v: %v, want a *tsquery.Error %q", tc.sq, err, tc.want)
		}
	}
	_, err := f.svc.Last(context.Background(), &last.Query{BackScan: math.MaxInt32, Queries: []last.SubQuery{{Metric: "sys.cpu"}}})
	var te *tsquery.Error
	if !errors.As(err, &te) {
		t.Errorf("huge back_scan: %v, want a 400", err)
	}
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		p    series.Point
		want string
	}{
		{series.IntPoint(0, -42), "-42"},
		{series.Float64Point(0, 1), "1.0"},
		{series.Float64Point(0, 0.001), "0.001"},
		{series.Float64Point(0, 0.0001), "1.0E-4"},
		{series.Float64Point(0, 12345678), "1.2345678E7"},
		{series.Float64Point(0, 1e21), "1.0E21"},
		{series.Float64Point(0, math.NaN()), "NaN"},
		{series.Float64Point(0, math.Inf(-1)), "-Infinity"},
		{series.Float32Point(0, 1.1), "1.100000023841858"},
	} {
		if got := last.FormatValue(tc.p); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
