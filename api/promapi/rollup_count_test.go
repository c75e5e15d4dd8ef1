package promapi

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	tsdpromql "github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	tsdstorage "github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// countT0 is a UTC midnight (s): hour cells start on it.
const countT0 = 1_699_920_000

// countPoint is one point of the count test, of host h.
type countPoint struct {
	host string
	p    series.Point
}

// countPoints are two hosts' points every 10 s over six hours, on the
// hour boundaries too, with staleness markers (counted nowhere).
func countPoints() []countPoint {
	var out []countPoint
	stale := math.Float64frombits(value.StaleNaN)
	for t := int64(countT0) * 1000; t <= (countT0+6*3600)*1000; t += 10_000 {
		out = append(out, countPoint{"a", series.IntPoint(t, t%13)})
		if t%70_000 == 0 {
			out = append(out, countPoint{"b", series.Float64Point(t, stale)})
		} else if t%30_000 != 0 {
			out = append(out, countPoint{"b", series.Float64Point(t, 0.5)})
		}
	}
	return out
}

// rollupQueryables writes points through tsd's head and flusher with the
// default rollup configuration (hour and day cells), and returns tsd's
// Queryable over them with rollups on and off.
func rollupQueryables(t *testing.T, pts []countPoint) (on, off *tsdpromql.Queryable) {
	t.Helper()
	ctx := context.Background()
	dir, quiet := t.TempDir(), slog.New(slog.DiscardHandler)
	db, err := tsdpebble.Open(filepath.Join(dir, "db"), &tsdpebble.Options{Logger: quiet, GCInterval: -1})
	mustDo(t, err)
	t.Cleanup(func() { db.Close() })
	tbls, err := tsdstorage.EnsureTables(ctx, db, schema.DataTableSpec(schema.DefaultDataTable),
		uid.TableSpec(uid.DefaultTable), schema.MetaTableSpec(schema.DefaultMetaTable))
	mustDo(t, err)
	u, err := uid.New(tbls[1], &uid.Options{Logger: quiet})
	mustDo(t, err)
	ix, err := index.Open(ctx, tbls[2], u, &index.Options{Logger: quiet})
	mustDo(t, err)
	t.Cleanup(func() { ix.Close() })
	now := time.Unix(countT0+10*3600, 0)
	h, err := head.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &head.HeadOptions{Registrar: ix, Logger: quiet,
		Clock: func() time.Time { return now }})
	mustDo(t, err)
	t.Cleanup(func() { h.Close() })
	cfg := rollup.DefaultConfig()
	ro := &flush.RollupOptions{Config: cfg, Tables: make([]tsdstorage.Table, len(cfg.Intervals))}
	for i, iv := range cfg.Intervals {
		if !iv.Default {
			mustDo(t, db.EnsureTable(ctx, schema.DataTableSpec(iv.Table)))
			ro.Tables[i], err = db.Table(ctx, iv.Table)
			mustDo(t, err)
		}
	}
	layout := rowkey.DefaultLayout()
	fl, err := flush.NewFlusher(h, &flush.FlushOptions{Table: tbls[0], Meta: tbls[2], Layout: &layout,
		WriterID: 1, Grace: time.Millisecond, Spread: -1, RowsPerSecond: -1, Rollups: ro})
	mustDo(t, err)
	app := h.NameAppender(u, 0)
	for _, x := range pts {
		_, err := app.Append(ctx, []byte("reqs"), []uid.Tag{{Key: []byte("host"), Value: []byte(x.host)}}, x.p)
		mustDo(t, err)
	}
	mustDo(t, app.Commit(false))
	_, err = fl.Flush(ctx, now, true)
	mustDo(t, err)
	r, err := read.New(&read.Options{Data: tbls[0], Layout: layout, Head: h, Logger: quiet, RowCacheBytes: -1,
		Rollups: &read.Rollups{Config: cfg, Tables: ro.Tables}})
	mustDo(t, err)
	for _, q := range []**tsdpromql.Queryable{&on, &off} {
		*q, err = tsdpromql.New(&tsdpromql.Options{Reader: r, Index: ix, UIDs: u, DisableRollups: q == &off})
		mustDo(t, err)
	}
	return on, off
}

// promCountDB holds the same points in Prometheus's tsdb.
func promCountDB(t *testing.T, pts []countPoint) *tsdb.DB {
	t.Helper()
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = 0
	db, err := tsdb.Open(t.TempDir(), slog.New(slog.DiscardHandler), nil, opts, nil)
	mustDo(t, err)
	t.Cleanup(func() { db.Close() })
	app := db.Appender(context.Background())
	for _, x := range pts {
		_, err := app.Append(0, labels.FromStrings("__name__", "reqs", "host", x.host), x.p.T, x.p.Float())
		mustDo(t, err)
	}
	mustDo(t, app.Commit())
	return db
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCountOverTimeRollupHTTP: count_over_time through /api/v1/query_range
// and /api/v1/query at steps aligned to the hour cells answers from the
// rollup table, with the very bytes of the same query with rollups off
// and of Prometheus's tsdb holding the same points.
func TestCountOverTimeRollupHTTP(t *testing.T) {
	pts := countPoints()
	on, off := rollupQueryables(t, pts)
	bases := []string{serveAPI(t, on), serveAPI(t, off), serveAPI(t, promCountDB(t, pts))}
	start, end := "1699923600", "1699941600" // T0+1h, T0+6h
	for _, c := range []struct {
		path string
		v    []string
	}{
		{"/api/v1/query_range", []string{"query", `count_over_time(reqs[1h])`, "start", start, "end", end, "step", "3600"}},
		{"/api/v1/query_range", []string{"query", `sum(count_over_time(reqs{host=~"a|b"}[2h]))`, "start", "1699927200", "end", end, "step", "7200"}},
		{"/api/v1/query", []string{"query", `count_over_time(reqs[3h])`, "time", "1699930800"}},
	} {
		before := on.Stats().RollupTables["tsdb-rollup-1h"]
		var bodies []string
		for _, base := range bases {
			code, body := call(t, http.MethodGet, base+c.path, vals(c.v...))
			if code != 200 {
				t.Fatalf("%s %s: %d %s", c.path, c.v[1], code, body)
			}
			bodies = append(bodies, body)
		}
		if bodies[0] != bodies[1] || bodies[0] != bodies[2] {
			t.Errorf("%s %s:\nrollups    %s\nno rollups %s\nPrometheus %s", c.path, c.v[1], bodies[0], bodies[1], bodies[2])
		}
		if !strings.Contains(bodies[0], `"result":[{`) || strings.Contains(bodies[0], "__tsd_count__") {
			t.Errorf("%s %s: %s", c.path, c.v[1], bodies[0])
		}
		if on.Stats().RollupTables["tsdb-rollup-1h"] == before {
			t.Errorf("%s %s: not answered from tsdb-rollup-1h", c.path, c.v[1])
		}
	}
	if off.Stats().RollupSelects != 0 {
		t.Error("rollups off read rollup cells")
	}
}
