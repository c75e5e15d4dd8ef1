package promql_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

var (
	rollupSeed  = flag.Uint64("promql.rollup.seed", 0, "seed of TestRollupModelPromQL (0: from the clock)")
	rollupIters = flag.Int("promql.rollup.iters", 40, "queries per round of TestRollupModelPromQL")
)

// rd0 is a UTC midnight: day cells start on it.
const rd0 = 1699920000 * 1000

// TestRollupModelPromQL writes random points (late, out of order,
// duplicated, staleness markers, many on hour boundaries, some left in
// the head across restarts, the rest flushed with their rollups) and asks
// random *_over_time queries, aligned to the rollup intervals or not,
// alone and under aggregations: the answer from rollup cells equals the
// answer with rollups off (pushed down and not) within 1e-9 relative, and
// bit for bit where the series hold only integers. Both formats.
func TestRollupModelPromQL(t *testing.T) {
	seed := *rollupSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-promql.rollup.seed to repeat)", seed)
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		for _, plan := range []read.Plan{read.PlanAuto, read.PlanSeries, read.PlanScan} {
			t.Run(format.String()+"/"+plan.String(), func(t *testing.T) { rollupModelPromQL(t, format, plan, false, seed) })
		}
	}
	// Some cells as written before cells kept their first point.
	t.Run("dense/old-cells", func(t *testing.T) { rollupModelPromQL(t, schema.FormatDense, read.PlanAuto, true, seed) })
	// The flusher as the daemon on Pebble runs it: packed day rows, and a
	// day's cell left to the flush of the day's last head row.
	t.Run("dense-sole/auto", func(t *testing.T) { rollupModelPromQLSole(t, seed) })
}

// rollupModelEnv is a stack with rollups, reopened on its directory to
// restart, and a Queryable with rollups off over the same reader.
type rollupModelEnv struct {
	// clockMs is the head's clock: after the data, as a daemon's is
	// after the points it receives (the head tells late points by it, and
	// a restarted flusher reads back the rows of hours before its start).
	clockMs int64
	dir     string
	format  schema.Format
	plan    read.Plan
	sole    bool
	s       *stack
	off     *promql.Queryable
}

func (e *rollupModelEnv) open(t *testing.T) {
	t.Helper()
	s, err := openStackErr(e.dir, stackOptions{format: e.format, rollups: true, rowCache: -1, clockMs: e.clockMs, plan: e.plan, sole: e.sole})
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	if e.off, err = promql.New(&promql.Options{Reader: s.reader, Index: s.index, UIDs: s.uids, DisableRollups: true}); err != nil {
		t.Fatal(err)
	}
}

func (e *rollupModelEnv) restart(t *testing.T) {
	t.Helper()
	if err := e.s.close(); err != nil {
		t.Fatal(err)
	}
	e.open(t)
}

func rollupModelPromQL(t *testing.T, format schema.Format, plan read.Plan, old bool, seed uint64) {
	runRollupModelPromQL(t, &rollupModelEnv{dir: t.TempDir(), format: format, plan: plan}, old, seed)
}

// rollupModelPromQLSole is the model with a sole writer (dense, Pebble).
func rollupModelPromQLSole(t *testing.T, seed uint64) {
	runRollupModelPromQL(t, &rollupModelEnv{dir: t.TempDir(), format: schema.FormatDense, plan: read.PlanAuto, sole: true}, false, seed)
}

func runRollupModelPromQL(t *testing.T, e *rollupModelEnv, old bool, seed uint64) {
	ctx := context.Background()
	const span = 2 * 86400 * 1000
	format := e.format
	e.clockMs = rd0 + span + 3_600_000
	e.open(t)
	t.Cleanup(func() { _ = e.s.close() })
	rng := rand.New(rand.NewPCG(seed, 23))
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	stale := math.Float64frombits(value.StaleNaN)
	var rolled, rawWindows, rawEdges, compared int64
	downgraded := false
	for round := range 6 {
		for h := range 4 {
			l := labels.FromStrings("__name__", "roll", "host", fmt.Sprintf("h%d", h), "kind", []string{"int", "mixed"}[h%2])
			for range 100 + rng.IntN(300) {
				ts := rd0 + rng.Int64N(span/10_000)*10_000
				switch rng.IntN(4) {
				case 0: // on an hour boundary, where windows start and end
					ts -= ts % 3_600_000
				case 1: // off the 10 s grid
					ts += rng.Int64N(10_000)
				}
				p := series.IntPoint(ts, rng.Int64N(2001)-1000)
				if h%2 == 1 {
					switch rng.IntN(20) {
					case 0:
						p = series.Float64Point(ts, stale)
					case 1, 2, 3, 4, 5, 6, 7, 8, 9:
						p = series.Float64Point(ts, math.Round(rng.Float64()*1e6)/1e3)
					}
				}
				if err := e.s.appendPoint(ctx, l, p); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.s.commit(); err != nil {
			t.Fatal(err)
		}
		act := rng.IntN(4)
		if round == 4 && old {
			act = 4
		}
		t.Logf("round %d: %s", round, []string{"flush all", "flush some", "restart", "nothing", "flush all, downgrade cells"}[act])
		switch act {
		case 0:
			// Flushed as a daemon flushes, at a time after the data: the
			// flusher trusts the head's points as a row's whole set only
			// for rows within 60 hours of that time.
			if _, err := e.s.flusher.Flush(ctx, time.UnixMilli(rd0+span+2*3_600_000), true); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := e.s.flushBefore(ctx, rd0+rng.Int64N(span)); err != nil {
				t.Fatal(err)
			}
		case 2:
			e.restart(t)
		case 4:
			// Cells as tsd wrote them before they kept their first point:
			// those windows' edges are read raw.
			if _, err := e.s.flusher.Flush(ctx, time.UnixMilli(rd0+span+2*3_600_000), true); err != nil {
				t.Fatal(err)
			}
			if n := e.downgradeCells(t, rng); n == 0 {
				t.Fatal("no rollup column to downgrade")
			}
			e.restart(t) // the reader's row cache
			downgraded = true
		}
		for i := range *rollupIters {
			q := randomRollupQuery(rng, span)
			before := e.s.q.Stats()
			compared += e.check(t, ctx, q, eng, plain, fmt.Sprintf("round %d query %d", round, i))
			after := e.s.q.Stats()
			rolled += after.RollupSelects - before.RollupSelects
			rawWindows += after.RollupRawWindows - before.RollupRawWindows
			rawEdges += after.RollupRawEdges - before.RollupRawEdges
		}
	}
	// Last, with every row's cells stored (and, for old, some downgraded):
	// windows on every hour of the span, whose edges are stored cells'.
	if _, err := e.s.flusher.Flush(ctx, time.UnixMilli(rd0+span+2*3_600_000), true); err != nil {
		t.Fatal(err)
	}
	if old {
		if n := e.downgradeCells(t, rng); n == 0 {
			t.Fatal("no rollup column to downgrade")
		}
		downgraded = true
	}
	e.restart(t)
	var lastEdges int64
	for _, q := range []rollupModelQuery{
		{expr: `sum_over_time(roll{kind="int"}[1h])`, start: rd0 + 3_600_000, end: rd0 + span, step: 3_600_000, intsOnly: true},
		{expr: `count_over_time(roll[2h])`, start: rd0 + 2*3_600_000, end: rd0 + span, step: 2 * 3_600_000, intsOnly: true},
	} {
		before := e.s.q.Stats()
		compared += e.check(t, ctx, q, eng, plain, "last query")
		after := e.s.q.Stats()
		lastEdges += after.RollupRawEdges - before.RollupRawEdges
		rolled += after.RollupSelects - before.RollupSelects
		rawEdges += after.RollupRawEdges - before.RollupRawEdges
		if after.RollupSelects == before.RollupSelects {
			t.Errorf("last query %s not answered from rollup cells", q)
		}
	}
	t.Logf("%d points compared, %d Selects from rollup cells, %d windows read raw, %d edges read raw", compared, rolled, rawWindows, rawEdges)
	if rolled == 0 || compared == 0 {
		t.Errorf("%d Selects answered from rollups, %d points compared: the model tests nothing", rolled, compared)
	}
	// Cells in tsd's format know their first points: an edge is read raw
	// only where OpenTSDB columns or downgraded cells are.
	switch {
	case format == schema.FormatDense && !downgraded && rawEdges != 0:
		t.Errorf("%d window edges read raw from a dense store whose cells know their first points", rawEdges)
	case (format == schema.FormatOpenTSDB || downgraded) && lastEdges == 0:
		t.Errorf("no window edge of the last query read raw with cells that do not know their first points")
	}
}

// check runs q with rollups on and compares it with rollups off, pushed
// down and not; it returns the points compared.
func (e *rollupModelEnv) check(t *testing.T, ctx context.Context, q rollupModelQuery, eng, plain prom.QueryEngine, what string) int64 {
	t.Helper()
	have := q.run(ctx, eng, e.s.q)
	for _, peer := range []struct {
		name string
		res  normResult
	}{{"rollups off, pushed down", q.run(ctx, eng, e.off)}, {"rollups off, not pushed down", q.run(ctx, plain, e.off)}} {
		eq := closeTo
		if q.intsOnly {
			eq = identical
		}
		if msg := diffWith(peer.res, have, eq); msg != "" {
			t.Fatalf("%s: %s against %s: %s", what, q, peer.name, msg)
		}
	}
	var n int64
	for _, s := range have.series {
		n += int64(len(s.t))
	}
	return n
}

// rollupModelQuery is one random query of the model.
type rollupModelQuery struct {
	expr             string
	instant          bool
	start, end, step int64
	intsOnly         bool
}

func (q rollupModelQuery) String() string {
	if q.instant {
		return fmt.Sprintf("%s at %d", q.expr, q.end)
	}
	return fmt.Sprintf("%s over [%d, %d] step %d", q.expr, q.start, q.end, q.step)
}

func (q rollupModelQuery) run(ctx context.Context, eng prom.QueryEngine, qy storage.Queryable) normResult {
	if q.instant {
		return instant(ctx, eng, qy, q.expr, q.end)
	}
	qry, err := eng.NewRangeQuery(ctx, qy, nil, q.expr, time.UnixMilli(q.start), time.UnixMilli(q.end), time.Duration(q.step)*time.Millisecond)
	if err != nil {
		return normResult{err: err.Error()}
	}
	defer qry.Close()
	return normalize(qry.Exec(ctx))
}

// randomRollupQuery draws a query over the span: mostly windows aligned
// to the 1h or 1d cells (so rollups serve them), some misaligned or
// overlapping, which read raw.
func randomRollupQuery(rng *rand.Rand, span int64) rollupModelQuery {
	fns := []string{"sum_over_time", "avg_over_time", "min_over_time", "max_over_time", "count_over_time", "last_over_time"}
	ranges := []int64{3_600_000, 2 * 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 86_400_000, 2 * 86_400_000}
	r := ranges[rng.IntN(len(ranges))]
	m := rng.IntN(3)
	sel := fmt.Sprintf("roll%s[%dms]", []string{"", `{kind="int"}`, `{host="h1"}`}[m], r)
	if rng.IntN(6) == 0 {
		sel += " offset 1h"
	}
	fn := fns[rng.IntN(len(fns))]
	q := rollupModelQuery{expr: fn + "(" + sel + ")"}
	// Counts are integers whatever the values: exact.
	q.intsOnly = m == 1 || fn == "count_over_time"
	switch rng.IntN(5) {
	case 0:
		q.expr = "max by (kind) (" + q.expr + ")"
	case 1:
		q.expr = "avg by (host) (" + q.expr + ")"
	case 2:
		q.expr = "sum(" + q.expr + ")"
	}
	unit := int64(3_600_000)
	if r%86_400_000 == 0 && rng.IntN(2) == 0 {
		unit = 86_400_000
	}
	q.start = rd0 - 86_400_000 + rng.Int64N((span+2*86_400_000)/unit)*unit
	if rng.IntN(8) == 0 {
		q.start += rng.Int64N(unit) // misaligned: raw
	}
	if rng.IntN(4) == 0 {
		q.instant, q.end = true, q.start
		return q
	}
	q.step = r * (1 + rng.Int64N(3))
	if rng.IntN(8) == 0 {
		q.step = r / 2 // overlapping windows: raw
	}
	q.end = q.start + rng.Int64N(span/q.step+1)*q.step
	return q
}
