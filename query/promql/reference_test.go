package promql_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

var refSeeds = flag.Int("promql.ref.seeds", 1, "random data sets the PromQL reference test compares (long runs: 20)")

// refStart is the first sample's time: not on an hour, so that rows are
// partly covered at both ends.
const (
	refStart = int64(1_600_000_000_000 + 17*60_000 + 123)
	refSpan  = int64(6 * time.Hour / time.Millisecond)
	refEnd   = refStart + refSpan
)

// refSample is one generated sample; ints are counters tsd stores as
// integers.
type refSample struct {
	l     labels.Labels
	t     int64
	v     float64
	isInt bool
}

// genReference makes gauges (random walks, some with gaps), counters with
// resets (integers) and a gauge with staleness markers, over six hours.
func genReference(r *rand.Rand) []refSample {
	var out []refSample
	for _, job := range []string{"api", "db", "web"} {
		for inst := range 3 {
			base := []string{"job", job, "instance", fmt.Sprint(inst)}
			if inst < 2 {
				base = append(base, "env", []string{"prod", "dev"}[(inst+len(job))%2])
			}
			out = append(out, genGauge(r, labels.FromStrings(append(base, "__name__", "gauge_a")...), 15_000)...)
			out = append(out, genCounter(r, labels.FromStrings(append(base, "__name__", "counter_b")...), 30_000)...)
			if inst != 1 {
				out = append(out, genStale(r, labels.FromStrings(append(base, "__name__", "gauge_c")...), 60_000)...)
			}
		}
	}
	return append(out, genSpecial(r)...)
}

// times returns the scrape times of one series: every step with jitter,
// minus up to two gaps of 10 to 40 minutes.
func times(r *rand.Rand, step int64) []int64 {
	type gap struct{ from, to int64 }
	var gaps []gap
	for range r.IntN(3) {
		from := refStart + r.Int64N(refSpan)
		gaps = append(gaps, gap{from, from + (10+r.Int64N(30))*60_000})
	}
	var ts []int64
	for t := refStart + r.Int64N(step); t < refEnd; t += step {
		if !slices.ContainsFunc(gaps, func(g gap) bool { return t >= g.from && t < g.to }) {
			ts = append(ts, t+r.Int64N(1000))
		}
	}
	return ts
}

func genGauge(r *rand.Rand, l labels.Labels, step int64) []refSample {
	v := r.Float64() * 100
	var out []refSample
	for _, t := range times(r, step) {
		v += r.NormFloat64() * 3
		out = append(out, refSample{l: l, t: t, v: v})
	}
	return out
}

func genCounter(r *rand.Rand, l labels.Labels, step int64) []refSample {
	v := r.Int64N(1000)
	var out []refSample
	for _, t := range times(r, step) {
		v += r.Int64N(50)
		if r.IntN(200) == 0 {
			v = r.Int64N(10) // a restart
		}
		out = append(out, refSample{l: l, t: t, v: float64(v), isInt: true})
	}
	return out
}

func genStale(r *rand.Rand, l labels.Labels, step int64) []refSample {
	var out []refSample
	stale := false
	for _, t := range times(r, step) {
		switch {
		case stale && r.IntN(10) == 0:
			stale = false
		case stale:
			continue
		case r.IntN(40) == 0:
			stale = true
			out = append(out, refSample{l: l, t: t, v: math.Float64frombits(value.StaleNaN)})
			continue
		}
		out = append(out, refSample{l: l, t: t, v: r.Float64() * 10})
	}
	return out
}

// loadTSD writes the samples in a shuffled order, in two passes: 70 % then
// a flush of the rows before the fourth hour; the rest (late points for
// flushed hours included) then a flush of the rows before the second hour,
// which writes the late points as extra columns; everything after stays in
// the head.
func loadTSD(ctx context.Context, t *testing.T, s *stack, r *rand.Rand, samples []refSample) {
	shuffled := slices.Clone(samples)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	cut := len(shuffled) * 7 / 10
	for i, pass := range [][]refSample{shuffled[:cut], shuffled[cut:]} {
		for j, x := range pass {
			p := series.Float64Point(x.t, x.v)
			if x.isInt {
				p = series.IntPoint(x.t, int64(x.v))
			}
			if err := s.appendPoint(ctx, x.l, p); err != nil {
				t.Fatal(err)
			}
			if j%5000 == 4999 {
				mustOK(t, s.commit())
			}
		}
		mustOK(t, s.commit())
		mustOK(t, s.flushBefore(ctx, refStart+int64(4-2*i)*3_600_000))
	}
}

// loadProm appends the samples in time order to a Prometheus tsdb.
func loadProm(ctx context.Context, t testing.TB, samples []refSample) *tsdb.DB {
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = 0
	db, err := tsdb.Open(t.TempDir(), slog.New(slog.DiscardHandler), nil, opts, nil)
	mustOK(t, err)
	t.Cleanup(func() { _ = db.Close() })
	db.DisableCompactions()
	sorted := slices.SortedFunc(slices.Values(samples), func(a, b refSample) int { return cmp.Compare(a.t, b.t) })
	app := db.Appender(ctx)
	for i, x := range sorted {
		if _, err := app.Append(0, x.l, x.t, x.v); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			mustOK(t, app.Commit())
			app = db.Appender(ctx)
		}
	}
	mustOK(t, app.Commit())
	return db
}

func mustOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReferencePrometheus loads the same random series into tsd (store
// and head, both formats) and Prometheus's tsdb, and requires every
// expression to give the same result through the same engine, within 1e-9
// relative, with range functions pushed down and without.
func TestReferencePrometheus(t *testing.T) {
	ctx := context.Background()
	for seed := range *refSeeds {
		samples := genReference(rand.New(rand.NewPCG(uint64(seed), 7)))
		ref := loadProm(ctx, t, samples)
		for _, f := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, f), func(t *testing.T) {
				s := openStack(t, stackOptions{format: f})
				loadTSD(ctx, t, s, rand.New(rand.NewPCG(uint64(seed), 8)), samples)
				compareAll(t, ref, s.q)
				comparePushdown(t, ref, s.q)
				compareLabels(t, ref, s.q)
			})
		}
	}
}

// refInstants are the instant query times: early, in a flushed hour, at
// the flush boundaries, in the head, at the very end.
var refInstants = []int64{
	refStart + 4*60_000, refStart + 75*60_000, refStart + 2*3_600_000, refStart + 4*3_600_000 + 30_000,
	refStart + 5*3_600_000 + 17*60_000, refEnd,
}

func compareAll(t *testing.T, ref storage.Queryable, got storage.Queryable) {
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	eng := pushdownEngine{plain}
	exprs := refExpressions()
	if len(exprs) < 100 {
		t.Fatalf("%d expressions, want at least 100", len(exprs))
	}
	ctx := context.Background()
	empty, points := 0, 0
	// tsd answers each expression twice: marked by WithPushdown, as the
	// HTTP API runs it, and unmarked, all samples through the engine.
	paths := []struct {
		name string
		eng  prom.QueryEngine
	}{{"pushdown", eng}, {"plain", plain}}
	for _, e := range exprs {
		for _, at := range refInstants {
			want := instant(ctx, plain, ref, e, at)
			for _, p := range paths {
				if msg := diffResults(want, instant(ctx, p.eng, got, e, at)); msg != "" {
					t.Errorf("%s at %d (%s): %s", e, at, p.name, msg)
				}
			}
		}
		start, end := refStart-10*60_000, refEnd+10*60_000
		want := rangeQ(ctx, plain, ref, e, start, end)
		for _, p := range paths {
			if msg := diffResults(want, rangeQ(ctx, p.eng, got, e, start, end)); msg != "" {
				t.Errorf("%s over [%d, %d] (%s): %s", e, start, end, p.name, msg)
			}
		}
		if len(want.series) == 0 {
			empty++
		}
		for _, s := range want.series {
			points += len(s.t)
		}
	}
	// The comparison means something only if the expressions return data.
	if empty > len(exprs)/10 {
		t.Errorf("%d of %d range queries returned nothing", empty, len(exprs))
	}
	t.Logf("%d expressions, %d range results empty, %d points compared", len(exprs), empty, points)
}

func instant(ctx context.Context, eng prom.QueryEngine, q storage.Queryable, e string, at int64) normResult {
	qry, err := eng.NewInstantQuery(ctx, q, nil, e, time.UnixMilli(at))
	if err != nil {
		return normResult{err: err.Error()}
	}
	defer qry.Close()
	return normalize(qry.Exec(ctx))
}

func rangeQ(ctx context.Context, eng prom.QueryEngine, q storage.Queryable, e string, start, end int64) normResult {
	qry, err := eng.NewRangeQuery(ctx, q, nil, e, time.UnixMilli(start), time.UnixMilli(end), 150*time.Second)
	if err != nil {
		return normResult{err: err.Error()}
	}
	defer qry.Close()
	return normalize(qry.Exec(ctx))
}
