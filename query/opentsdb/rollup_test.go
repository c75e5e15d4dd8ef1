package opentsdb_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/bigtable"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

var (
	rollupSeed  = flag.Uint64("rollup.seed", 0, "seed of TestRollupModel (0: from the clock)")
	rollupIters = flag.Int("rollup.iters", 60, "queries per round of TestRollupModel")
)

// d0 is a UTC midnight: day cells start on it.
const d0 = 1699920000

// rollupEnv is the stack of stack_test.go with rollups computed at flush
// (the default configuration: 1h cells in 1d rows, 1d cells in 1n rows)
// and read by the engine; restart reopens the head from its log.
type rollupEnv struct {
	s      *stack
	db     storage.DB
	dir    string
	meta   storage.Table
	ro     *flush.RollupOptions
	format schema.Format
	plan   read.Plan
	opts   opentsdb.Options
}

func openRollupEnv(t testing.TB, format schema.Format, db storage.DB) *rollupEnv {
	return openRollupEnvPlan(t, format, db, read.PlanAuto)
}

func openRollupEnvPlan(t testing.TB, format schema.Format, db storage.DB, plan read.Plan) *rollupEnv {
	t.Helper()
	ctx := context.Background()
	e := &rollupEnv{db: db, dir: t.TempDir(), format: format, plan: plan}
	if e.db == nil {
		pdb, err := tsdpebble.Open(filepath.Join(e.dir, "db"), &tsdpebble.Options{Logger: quiet, GCInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pdb.Close() })
		e.db = pdb
	}
	tbls, err := storage.EnsureTables(ctx, e.db, schema.DataTableSpec(schema.DefaultDataTable),
		uid.TableSpec(uid.DefaultTable), schema.MetaTableSpec(schema.DefaultMetaTable))
	if err != nil {
		t.Fatal(err)
	}
	cfg := rollup.DefaultConfig()
	e.ro = &flush.RollupOptions{Config: cfg, Tables: make([]storage.Table, len(cfg.Intervals))}
	for i, iv := range cfg.Intervals {
		if iv.Default {
			continue
		}
		if err := e.db.EnsureTable(ctx, schema.DataTableSpec(iv.Table)); err != nil {
			t.Fatal(err)
		}
		if e.ro.Tables[i], err = e.db.Table(ctx, iv.Table); err != nil {
			t.Fatal(err)
		}
	}
	e.s = &stack{layout: rowkey.DefaultLayout(), raw: map[string]*rawSeries{}, data: tbls[0]}
	if e.s.uids, err = uid.New(tbls[1], &uid.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	e.meta = tbls[2]
	if e.s.index, err = index.Open(ctx, e.meta, e.s.uids, &index.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.s.index.Close() })
	e.open(t)
	t.Cleanup(func() { e.s.head.Close() })
	return e
}

// open starts the head (replaying its log), the flusher, the reader and
// the engine.
func (e *rollupEnv) open(t testing.TB) {
	t.Helper()
	s := e.s
	var err error
	s.head, err = head.OpenHead(vfs.Default, filepath.Join(e.dir, "wal"), &head.HeadOptions{Registrar: s.index, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if s.flush, err = flush.NewFlusher(s.head, &flush.FlushOptions{Table: s.data, Meta: e.meta, Layout: &s.layout, WriterID: 3,
		Format: e.format, Rollups: e.ro}); err != nil {
		t.Fatal(err)
	}
	s.app = s.head.NameAppender(s.uids, 0)
	rd, err := read.New(&read.Options{Data: s.data, Layout: s.layout, Head: s.head, Logger: quiet, RowCacheBytes: -1, Plan: e.plan,
		Rollups: &read.Rollups{Config: e.ro.Config, Tables: e.ro.Tables}})
	if err != nil {
		t.Fatal(err)
	}
	opts := e.opts
	opts.Reader, opts.UIDs, opts.Index, opts.Logger = rd, s.uids, s.index, quiet
	if s.eng, err = opentsdb.New(&opts); err != nil {
		t.Fatal(err)
	}
}

// restart closes the head without flushing and opens it again: its
// unflushed points come back from its log.
func (e *rollupEnv) restart(t testing.TB) {
	t.Helper()
	if err := e.s.head.Close(); err != nil {
		t.Fatal(err)
	}
	e.open(t)
}

// execBody runs a query and returns its body (object form).
func (e *rollupEnv) execBody(t testing.TB, m string, start, end int64, summary bool) string {
	t.Helper()
	q := mquery(t, sec(start), sec(end), m)
	q.ShowSummary = summary
	res, err := e.s.eng.Execute(context.Background(), q)
	if err != nil {
		t.Fatalf("execute %s: %v", m, err)
	}
	defer res.Release()
	return string(res.AppendJSON(nil, opentsdb.JSONOptions{}))
}

type dpsOut struct {
	Metric string             `json:"metric"`
	Tags   map[string]string  `json:"tags"`
	DPS    map[string]float64 `json:"dps"`
}

// sameAnswer compares two bodies: the same series and timestamps, each
// value equal within 1e-9 relative.
func sameAnswer(got, want string) error {
	var g, w []dpsOut
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("rollup answer: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return fmt.Errorf("raw answer: %v: %s", err, want)
	}
	if len(g) != len(w) {
		return fmt.Errorf("%d series, raw %d", len(g), len(w))
	}
	for i := range g {
		if fmt.Sprint(g[i].Tags) != fmt.Sprint(w[i].Tags) || len(g[i].DPS) != len(w[i].DPS) {
			return fmt.Errorf("series %d: tags %v %d points, raw %v %d points", i, g[i].Tags, len(g[i].DPS), w[i].Tags, len(w[i].DPS))
		}
		for ts, wv := range w[i].DPS {
			gv, ok := g[i].DPS[ts]
			if !ok {
				return fmt.Errorf("series %d: no point at %s", i, ts)
			}
			if d := math.Abs(gv - wv); d > 1e-9*math.Max(math.Abs(wv), 1e-300) && d > 0 {
				return fmt.Errorf("series %d at %s: %v, raw %v", i, ts, gv, wv)
			}
		}
	}
	return nil
}

// rollupQuery is a random downsampled query the rollups may serve and its
// ROLLUP_RAW twin.
func rollupQuery(rng *rand.Rand, span int64) (m, raw string, start, end int64) {
	aggs := []string{"sum", "avg", "min", "max", "count"}
	dsAggs := []string{"sum", "count", "min", "max", "avg", "mimmin", "mimmax"}
	dss := []string{"1h", "2h", "3h", "6h", "1d", "2d"}
	ds := dss[rng.IntN(len(dss))] + "-" + dsAggs[rng.IntN(len(dsAggs))]
	filter := "{host=*}"
	if rng.IntN(3) == 0 {
		filter = "{host=h" + strconv.Itoa(rng.IntN(4)) + "}"
	}
	agg := aggs[rng.IntN(len(aggs))]
	usage := []string{"", "rollup_nofallback:", "rollup_fallback:", "rollup_fallback_raw:"}[rng.IntN(4)]
	m = agg + ":" + usage + ds + ":roll" + filter
	raw = agg + ":rollup_raw:" + ds + ":roll" + filter
	start = d0 + rng.Int64N(span)
	if rng.IntN(2) == 0 {
		start -= start % 3600
	}
	end = start + 1 + rng.Int64N(d0+span-start+3600)
	return m, raw, start, end
}

// TestRollupModel writes random points (late, out of order, rewritten,
// some left in the head across restarts, the rest flushed with their
// rollups) and asks random downsampled queries with and without rollups:
// every answer equals the raw one within 1e-9 relative. Both formats,
// each read plan.
func TestRollupModel(t *testing.T) {
	seed := *rollupSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-rollup.seed to repeat)", seed)
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		for _, plan := range []read.Plan{read.PlanAuto, read.PlanSeries, read.PlanScan} {
			t.Run(format.String()+"/"+plan.String(), func(t *testing.T) {
				rollupModel(t, openRollupEnvPlan(t, format, nil, plan), seed)
			})
		}
	}
}

// TestRollupModelBigtable is TestRollupModel on the Bigtable engine
// (the in-process emulator), dense format.
func TestRollupModelBigtable(t *testing.T) {
	seed := *rollupSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-rollup.seed to repeat)", seed)
	srv, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(srv.Close)
	db, err := bigtable.Open(context.Background(), bigtable.Options{
		Project: "proj", Instance: "inst", EmulatorHost: srv.Addr, AttemptTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rollupModel(t, openRollupEnv(t, schema.FormatDense, db), seed)
}

func rollupModel(t *testing.T, e *rollupEnv, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 19))
	const span = 4 * 86400
	served := 0
	for round := range 6 {
		for h := range 4 {
			tags := map[string]string{"host": "h" + strconv.Itoa(h)}
			var pts []series.Point
			for range 100 + rng.IntN(400) {
				ts := int64(d0+rng.IntN(span)) * 1000
				if rng.IntN(2) == 0 {
					pts = append(pts, series.IntPoint(ts, int64(rng.IntN(1000))))
				} else {
					pts = append(pts, series.Float64Point(ts, rng.Float64()*1000))
				}
			}
			e.s.put(t, "roll", tags, pts...)
		}
		switch rng.IntN(3) {
		case 0:
			e.s.flushAll(t)
		case 1:
			e.restart(t)
		}
		for i := range *rollupIters {
			m, raw, start, end := rollupQuery(rng, span)
			got := e.execBody(t, m, start, end, false)
			want := e.execBody(t, raw, start, end, false)
			if err := sameAnswer(got, want); err != nil {
				t.Fatalf("round %d query %d %s %d-%d: %v\nrollups: %s\nraw:     %s", round, i, m, start, end, err, got, want)
			}
			if got != want {
				served++
			}
		}
	}
	t.Logf("%d answers differed in bytes from raw only within 1e-9", served)
}

// TestRollupTables checks which table serves a query (showSummary's
// table), OpenTSDB's selection: the longest interval dividing the
// downsampling interval, raw for the default one, ROLLUP_RAW, or a
// downsampler rollups cannot serve.
func TestRollupTables(t *testing.T) {
	e := openRollupEnv(t, schema.FormatDense, nil)
	for h := range 48 {
		e.s.put(t, "roll", map[string]string{"host": "a"}, series.IntPoint(int64(d0+h*3600+60)*1000, int64(h)))
	}
	e.s.flushAll(t)
	for _, c := range []struct{ m, table string }{
		{"sum:1h-avg:roll", "tsdb-rollup-1h"},
		{"sum:2h-sum:roll", "tsdb-rollup-1h"},
		{"sum:1d-max:roll", "tsdb-rollup-1d"},
		{"sum:2d-mimmin:roll", "tsdb-rollup-1d"},
		{"sum:rollup_raw:1h-avg:roll", "tsdb"},
		{"sum:30m-avg:roll", "tsdb"},
		{"sum:1h-dev:roll", "tsdb"},
		{"sum:1hc-avg:roll", "tsdb"},
		{"sum:roll", "tsdb"},
	} {
		body := e.execBody(t, c.m, d0, d0+2*86400, true)
		if !strings.Contains(body, `"table":"`+c.table+`"`) {
			t.Errorf("%s: want table %s in %s", c.m, c.table, body)
		}
	}
	// The answer of a rollup read is the raw one.
	got := e.execBody(t, "sum:1h-avg:roll", d0, d0+2*86400, false)
	want := e.execBody(t, "sum:rollup_raw:1h-avg:roll", d0, d0+2*86400, false)
	if err := sameAnswer(got, want); err != nil || !strings.Contains(got, `"1699920000":0`) {
		t.Fatalf("%v: %s", err, got)
	}
}

// TestRollupLimit checks that cells count against the query's data
// points limit as raw points do: 48 cells over a limit of 40 fail with a
// *read.LimitError.
func TestRollupLimit(t *testing.T) {
	e := openRollupEnv(t, schema.FormatDense, nil)
	for h := range 48 {
		e.s.put(t, "roll", map[string]string{"host": "a"}, series.IntPoint(int64(d0+h*3600+60)*1000, int64(h)))
	}
	e.s.flushAll(t)
	e.opts.Limits = read.Limits{MaxPoints: 40}
	e.restart(t)
	q := mquery(t, sec(d0), sec(d0+2*86400), "sum:1h-sum:roll")
	_, err := e.s.eng.Execute(context.Background(), q)
	if !errors.Is(err, read.ErrLimit) {
		t.Fatalf("got %v, want a limit error", err)
	}
	q = mquery(t, sec(d0), sec(d0+86400), "sum:1h-sum:roll")
	if _, err := e.s.eng.Execute(context.Background(), q); err != nil {
		t.Fatalf("24 cells: %v", err)
	}
}

// TestRollupPartialColumns reads a rollup row holding only sum columns in
// OpenTSDB's format (an adopted OpenTSDB table whose job wrote sums
// alone), for a day without raw points: OpenTSDB reads the columns of
// the aggregator asked for, so the sum downsampler answers from them; avg
// pairs sum with count and finds none, so ROLLUP_NOFALLBACK answers no
// point and ROLLUP_FALLBACK_RAW reads the raw table (empty that day).
func TestRollupPartialColumns(t *testing.T) {
	e := openRollupEnv(t, schema.FormatOpenTSDB, nil)
	tags := map[string]string{"host": "a"}
	// Raw points on the days before and after make the series' span
	// cover the day of the adopted cells.
	e.s.put(t, "roll", tags, series.IntPoint(int64(d0+60)*1000, 1), series.IntPoint(int64(d0+2*86400+60)*1000, 2))
	e.s.flushAll(t)
	tsuid, err := hex.DecodeString(e.s.tsuidHex(t, e.s.raw[seriesName("roll", tags)]))
	if err != nil {
		t.Fatal(err)
	}
	day := int64(d0 + 86400)
	key, err := e.s.layout.AppendRowKeyFromTSUID(nil, tsuid, day*1000)
	if err != nil {
		t.Fatal(err)
	}
	// Sum (id 0) of the 1h cells at index 2 and 3: qualifier
	// [00][uint16(index<<4 | flags)], values on 2 and 1 bytes.
	mut := storage.Mutation{Row: key, Cells: []storage.Cell{
		{Family: "t", Qualifier: []byte{0x00, 0x00, 0x21}, Value: []byte{0x01, 0x2C}},
		{Family: "t", Qualifier: []byte{0x00, 0x00, 0x30}, Value: []byte{0x07}},
	}}
	if err := e.ro.Tables[1].Apply(context.Background(), []storage.Mutation{mut}); err != nil {
		t.Fatal(err)
	}
	got := e.execBody(t, "sum:1h-sum:roll", day, day+86400-1, true)
	if !strings.Contains(got, fmt.Sprintf(`"dps":{"%d":300.0,"%d":7.0}`, day+2*3600, day+3*3600)) ||
		!strings.Contains(got, `"table":"tsdb-rollup-1h"`) {
		t.Errorf("sum over sum-only cells: %s", got)
	}
	for _, m := range []string{"sum:1h-avg:roll", "sum:1h-count:roll", "sum:rollup_fallback_raw:1h-avg:roll"} {
		if got := e.execBody(t, m, day, day+86400-1, false); !strings.Contains(got, `"dps":{}`) {
			t.Errorf("%s over sum-only cells: %s, want no points", m, got)
		}
	}
}
