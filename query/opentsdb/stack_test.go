package opentsdb_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/annotation"
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

// stack is the real write path on a pebble engine in a temp dir, as
// cmd/tsd wires it, with the query engine on top. raw keeps every point
// written, for the reference aggregator.
type stack struct {
	data   storage.Table
	uids   *uid.UIDs
	index  *index.Index
	head   *head.Head
	flush  *flush.Flusher
	layout rowkey.Layout
	app    *head.NameAppender
	eng    *opentsdb.Engine
	notes  *annotation.Store
	raw    map[string]*rawSeries
}

// rawSeries is one series as written.
type rawSeries struct {
	metric string
	tags   map[string]string
	pts    []series.Point
}

var quiet = slog.New(slog.DiscardHandler)

func openStack(t testing.TB, opts opentsdb.Options) *stack {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := tsdpebble.Open(filepath.Join(dir, "db"), &tsdpebble.Options{Logger: quiet, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tbls, err := storage.EnsureTables(ctx, db, schema.DataTableSpec(schema.DefaultDataTable),
		uid.TableSpec(uid.DefaultTable), schema.MetaTableSpec(schema.DefaultMetaTable))
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{layout: rowkey.DefaultLayout(), raw: map[string]*rawSeries{}}
	s.data = tbls[0]
	if s.uids, err = uid.New(tbls[1], &uid.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	meta := tbls[2]
	if s.index, err = index.Open(ctx, meta, s.uids, &index.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.index.Close() })
	s.head, err = head.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &head.HeadOptions{Registrar: s.index, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.head.Close() })
	if s.flush, err = flush.NewFlusher(s.head, &flush.FlushOptions{Table: s.data, Meta: meta, Layout: &s.layout, WriterID: 3}); err != nil {
		t.Fatal(err)
	}
	s.app = s.head.NameAppender(s.uids, 0)
	rd, err := read.New(&read.Options{Data: s.data, Layout: s.layout, Head: s.head, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if s.notes, err = annotation.NewStore(annotation.Options{Table: s.data, Layout: &s.layout}); err != nil {
		t.Fatal(err)
	}
	opts.Reader, opts.UIDs, opts.Index, opts.Logger, opts.Annotations = rd, s.uids, s.index, quiet, s.notes
	if opts.AllowDelete {
		opts.Deleter = &opentsdb.StoreDeleter{Table: s.data, Layout: s.layout, Head: s.head}
	}
	if s.eng, err = opentsdb.New(&opts); err != nil {
		t.Fatal(err)
	}
	return s
}

// seriesName is the raw map's key: metric{k=v,...} with sorted keys.
func seriesName(metric string, tags map[string]string) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range tags {
			if !yield(k) {
				return
			}
		}
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + tags[k]
	}
	return metric + "{" + strings.Join(parts, ",") + "}"
}

// put writes points of one series and records them.
func (s *stack) put(t testing.TB, metric string, tags map[string]string, pts ...series.Point) {
	t.Helper()
	var ts []uid.Tag
	for k, v := range tags {
		ts = append(ts, uid.Tag{Key: []byte(k), Value: []byte(v)})
	}
	for _, p := range pts {
		if _, err := s.app.Append(context.Background(), []byte(metric), ts, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.app.Commit(false); err != nil {
		t.Fatal(err)
	}
	name := seriesName(metric, tags)
	r := s.raw[name]
	if r == nil {
		r = &rawSeries{metric: metric, tags: tags}
		s.raw[name] = r
	}
	r.pts = append(r.pts, pts...)
	sort.Slice(r.pts, func(i, j int) bool { return r.pts[i].T < r.pts[j].T })
}

// flushAll writes every head row to the store.
func (s *stack) flushAll(t testing.TB) {
	t.Helper()
	if _, err := s.flush.Flush(context.Background(), time.Now(), true); err != nil {
		t.Fatal(err)
	}
}

// tsuidHex is the uppercase hex TSUID of a raw series.
func (s *stack) tsuidHex(t testing.TB, r *rawSeries) string {
	t.Helper()
	ctx := context.Background()
	m, err := s.uids.Lookup(ctx, uid.Metric, []byte(r.metric))
	if err != nil {
		t.Fatal(err)
	}
	var tags []rowkey.Tag
	for k, v := range r.tags {
		kid, err1 := s.uids.Lookup(ctx, uid.TagK, []byte(k))
		vid, err2 := s.uids.Lookup(ctx, uid.TagV, []byte(v))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		tags = append(tags, rowkey.Tag{Key: uid.AppendID(nil, kid, 3), Value: uid.AppendID(nil, vid, 3)})
	}
	b, err := s.layout.AppendTSUID(nil, uid.AppendID(nil, m, 3), tags)
	if err != nil {
		t.Fatal(err)
	}
	return string(rowkey.AppendTSUIDHex(nil, b))
}

// outSeries is one element of the response, decoded.
type outSeries struct {
	Metric        string            `json:"metric"`
	Tags          map[string]string `json:"tags"`
	AggregateTags []string          `json:"aggregateTags"`
	Query         map[string]any    `json:"query"`
	TSUIDs        []string          `json:"tsuids"`
	DPS           [][2]any          `json:"dps"`
}

// exec runs q through the engine and decodes the arrays form of the
// response, numbers kept as json.Number.
func (s *stack) exec(t testing.TB, q *tsquery.TSQuery) []outSeries {
	t.Helper()
	res, err := s.eng.Execute(context.Background(), q)
	if err != nil {
		t.Fatalf("execute %s: %v", q, err)
	}
	body := res.AppendJSON(nil, opentsdb.JSONOptions{Arrays: true})
	res.Release()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var out []outSeries
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return out
}

// execJSON runs q and returns the response body in the object form.
func (s *stack) execJSON(t testing.TB, q *tsquery.TSQuery) string {
	t.Helper()
	res, err := s.eng.Execute(context.Background(), q)
	if err != nil {
		t.Fatalf("execute %s: %v", q, err)
	}
	defer res.Release()
	body := res.AppendJSON(nil, opentsdb.JSONOptions{})
	if !json.Valid(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	return string(body)
}

// mquery parses a GET-style query.
func mquery(t testing.TB, start, end string, ms ...string) *tsquery.TSQuery {
	t.Helper()
	q := &tsquery.TSQuery{Start: start, End: end}
	for _, m := range ms {
		sq, err := tsquery.ParseM(m)
		if err != nil {
			t.Fatalf("ParseM(%q): %v", m, err)
		}
		q.Queries = append(q.Queries, sq)
	}
	return q
}
