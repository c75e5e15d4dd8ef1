package harness

import (
	"context"
	"flag"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	promstorage "github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	tsdpromql "github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

var (
	benchHosts = flag.Int("promql.hosts", 20, "hosts of BenchmarkPromQL's dataset")
	benchSpan  = flag.Duration("promql.span", 13*time.Hour, "span of BenchmarkPromQL's dataset (>= 12h)")
	benchCache = flag.Int64("promql.rowcache", 0, "tsd readers' decoded-row cache in bytes: 0 the default, -1 off")
)

// BenchmarkPromQL runs the two PromQL figures of tsdbench on tsd's
// Queryable and on Prometheus's block, loaded once (for profiling the
// query path: go test -run - -bench PromQL -cpuprofile).
func BenchmarkPromQL(b *testing.B) {
	e, d, tl := benchDataset(b)
	pl, err := loadProm(e, gen.ValuesInt)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i, q := range promQueries {
		name := []string{"max1h", "avg12h"}[i]
		expr, err := parser.ParseExpr(q.Expr)
		if err != nil {
			b.Fatal(err)
		}
		// tsd: range functions pushed down, as the HTTP API runs queries;
		// tsd-raw: the engine gets every sample.
		push := tsdpromql.WithPushdown(ctx, tl.promQ, expr)
		b.Run(name+"/tsd", func(b *testing.B) { benchPromRun(b, push, tl.promEng, tl.promQ, q, d.MaxTime()) })
		b.Run(name+"/tsd-raw", func(b *testing.B) { benchPromRun(b, ctx, tl.promEng, tl.promQ, q, d.MaxTime()) })
		b.Run(name+"/prom", func(b *testing.B) { benchPromRun(b, ctx, pl.eng, pl.db, q, d.MaxTime()) })
	}
}

// benchDataset loads the devops int dataset of -promql.hosts and
// -promql.span into tsd on pebble, through the write path, for one
// benchmark; the Env is closed when b ends.
func benchDataset(b *testing.B) (*Env, *promtsdb.Data, *tsdLoaded) {
	e, err := NewEnv(Size{Hosts: *benchHosts, Span: *benchSpan, Runs: 1, QueryRepeats: 1}, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	e.RowCacheBytes = *benchCache
	e.OpenStore = func(dir string) (storage.DB, error) {
		return pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	}
	d, err := promData(e, gen.ValuesInt)
	if err != nil {
		b.Fatal(err)
	}
	tl, err := loadTSD(e, "int", d)
	if err != nil {
		b.Fatal(err)
	}
	return e, d, tl
}

// benchPromRun loops q and reports the process CPU time per query, the
// tsdbench clock (wall time on a shared machine is mostly waiting).
func benchPromRun(b *testing.B, ctx context.Context, eng *promql.Engine, db promstorage.Queryable, q promtsdb.Query, end int64) {
	b.ReportAllocs()
	cpu0, err := processCPU()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := promtsdb.Run(ctx, eng, db, q, end); err != nil {
			b.Fatal(err)
		}
	}
	cpu1, err := processCPU()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}
