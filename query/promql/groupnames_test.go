package promql_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/query/promql"
)

// countingQueryable counts the Queriers asked of a real Queryable.
type countingQueryable struct {
	storage.Queryable
	n int
}

func (c *countingQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	c.n++
	return c.Queryable.Querier(mint, maxt)
}

// TestNameCollision: over devopsSamples (three metrics of five hosts,
// each host's series alike but for the name), NameCollision finds the
// aggregations by name whose selector picks two series that differ only
// by their names, and reads nothing for a query without an aggregation by
// name over a selector of several names.
func TestNameCollision(t *testing.T) {
	ctx := context.Background()
	s := openStack(t, stackOptions{})
	for _, x := range devopsSamples() {
		mustOK(t, s.append(ctx, x.l, x.t, x.v))
	}
	mustOK(t, s.commit())
	eng := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	for _, c := range []struct {
		q          string
		want, read bool
	}{
		{`max(max_over_time({__name__=~"cpu_(usage_user|usage_system)", hostname="host_3"}[1m])) by (__name__)`, true, true},
		{`avg by (__name__, hostname) (avg_over_time({__name__=~"cpu_.*"}[1h]))`, true, true},
		{`avg without (region) (avg_over_time({__name__=~"cpu_.*"}[1h]))`, true, true},
		{`sum(max by (__name__) (rate({__name__=~"cpu_.*"}[5m])))`, true, true},
		// One name, several hosts: nothing collides.
		{`max by (__name__) (max_over_time({__name__=~"cpu_usage_user"}[1m]))`, false, true},
		// No series.
		{`max by (__name__) (max_over_time({__name__=~"cpu_.*", hostname="host_9"}[1m]))`, false, true},
		// Nothing grouped by name, or one name: nothing read.
		{`max(max_over_time({__name__=~"cpu_.*", hostname="host_3"}[1m]))`, false, false},
		{`max without (__name__) (max_over_time({__name__=~"cpu_.*"}[1m]))`, false, false},
		{`max by (__name__) (max_over_time(cpu_usage_user[1m]))`, false, false},
		{`max_over_time({__name__=~"cpu_.*"}[1m])`, false, false},
		// A bare selector keeps its names: nothing read.
		{`count by (__name__) ({__name__=~"cpu_.*"})`, false, false},
		{`count by (__name__) (({__name__=~"cpu_.*"}))`, false, false},
	} {
		qry, err := eng.NewInstantQuery(ctx, s.q, nil, c.q, time.UnixMilli(refStart+30*60_000))
		mustOK(t, err)
		cq := &countingQueryable{Queryable: s.q}
		got, err := promql.NameCollision(ctx, cq, qry.Statement().(*parser.EvalStmt))
		qry.Close()
		if err != nil || got != c.want || (cq.n > 0) != c.read {
			t.Errorf("%s: %v, %v, %d queriers; want %v, reading %v", c.q, got, err, cq.n, c.want, c.read)
		}
	}
}

// TestKeepGroupedNames: TSBS's queries by name, written by
// KeepGroupedNames and run on tsd's engine with delayed name removal over
// tsd's store, give one series per metric, named, each with the values
// the same query over that metric alone gives in Prometheus's engine
// over Prometheus's tsdb; and the written query gives the same answer in
// both engines. A query whose names no function drops answers the same
// written or not.
func TestKeepGroupedNames(t *testing.T) {
	ctx := context.Background()
	samples := devopsSamples()
	ref := loadProm(ctx, t, samples)
	s := openStack(t, stackOptions{})
	for _, x := range samples {
		mustOK(t, s.append(ctx, x.l, x.t, x.v))
	}
	mustOK(t, s.commit())
	mustOK(t, s.flushBefore(ctx, refStart+20*60_000))
	quiet := slog.New(slog.DiscardHandler)
	tsdEng := promql.NewEngine(promql.EngineOptions{Logger: quiet, Features: promql.Features{DelayedNameRemoval: true}})
	promEng := prom.NewEngine(prom.EngineOpts{Logger: quiet, MaxSamples: 50_000_000, Timeout: time.Minute,
		LookbackDelta: 5 * time.Minute, EnableDelayedNameRemoval: true})
	plainEng := prom.NewEngine(prom.EngineOpts{Logger: quiet, MaxSamples: 50_000_000, Timeout: time.Minute,
		LookbackDelta: 5 * time.Minute})
	rewrite := func(q string) string {
		e, err := parser.ParseExpr(q)
		mustOK(t, err)
		return promql.KeepGroupedNames(e).String()
	}
	at, end := int64(refStart+30*60_000), int64(refStart+40*60_000)

	const tsbs = `max(max_over_time({__name__=~"cpu_(usage_user|usage_system)", hostname="host_3"}[1m])) by (__name__)`
	q := rewrite(tsbs)
	if !strings.Contains(q, `label_replace(max_over_time(`) {
		t.Errorf("written: %s", q)
	}
	got, gotR := instant(ctx, tsdEng, s.q, q, at), rangeQ(ctx, tsdEng, s.q, q, refStart, end)
	if msg := diffResults(instant(ctx, promEng, ref, q, at), got); msg != "" {
		t.Errorf("instant %s: %s", q, msg)
	}
	if msg := diffResults(rangeQ(ctx, promEng, ref, q, refStart, end), gotR); msg != "" {
		t.Errorf("range %s: %s", q, msg)
	}
	if len(got.series) != 2 || len(gotR.series) != 2 {
		t.Fatalf("%s: %+v, %+v; want two series", q, got, gotR)
	}
	for i, name := range []string{"cpu_usage_system", "cpu_usage_user"} {
		one := `max(max_over_time(` + name + `{hostname="host_3"}[1m]))`
		want, wantR := instant(ctx, plainEng, ref, one, at), rangeQ(ctx, plainEng, ref, one, refStart, end)
		want.series[0].labels, wantR.series[0].labels = `{__name__="`+name+`"}`, `{__name__="`+name+`"}`
		if msg := diffResults(normResult{series: want.series}, normResult{series: got.series[i : i+1]}); msg != "" {
			t.Errorf("instant %s: %s", name, msg)
		}
		if msg := diffResults(normResult{series: wantR.series}, normResult{series: gotR.series[i : i+1]}); msg != "" {
			t.Errorf("range %s: %s", name, msg)
		}
	}

	// Marked for pushdown, as api/promapi runs it, over a selector of one
	// name, which WithPushdown would read as a window selector without
	// the name were it not inside label_replace.
	const eq = `max by (__name__) (max_over_time(cpu_usage_user{hostname="host_3"}[1m]))`
	qry, err := tsdEng.NewRangeQuery(ctx, s.q, nil, rewrite(eq), time.UnixMilli(refStart), time.UnixMilli(end), 150*time.Second)
	mustOK(t, err)
	pushed := normalize(qry.Exec(promql.WithPushdown(ctx, s.q, qry.Statement())))
	qry.Close()
	if msg := diffResults(rangeQ(ctx, promEng, ref, rewrite(eq), refStart, end), pushed); msg != "" || len(pushed.series) != 1 ||
		pushed.series[0].labels != `{__name__="cpu_usage_user"}` {
		t.Errorf("%s written, pushed down: %+v %s", eq, pushed, msg)
	}

	// No function drops the names: the wrapper changes nothing.
	const kept = `sum by (__name__) ({__name__=~"cpu_(usage_user|usage_system)"})`
	if msg := diffResults(rangeQ(ctx, plainEng, ref, kept, refStart, end), rangeQ(ctx, tsdEng, s.q, rewrite(kept), refStart, end)); msg != "" {
		t.Errorf("%s written: %s", kept, msg)
	}
}
