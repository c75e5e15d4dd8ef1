package opentsdb_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
)

var fusedIters = flag.Int("query.fused", 60, "random queries TestFusedMatchesRaw runs")

// engineWith returns an engine on s's store whose reader uses plan, with
// the fused downsampling on or off.
func (s *stack) engineWith(t *testing.T, plan read.Plan, fuse bool) *opentsdb.Engine {
	t.Helper()
	rd, err := read.New(&read.Options{Data: s.data, Layout: s.layout, Head: s.head, Logger: quiet, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	e, err := opentsdb.New(&opentsdb.Options{Reader: rd, UIDs: s.uids, Index: s.index, Logger: quiet, Annotations: s.notes})
	if err != nil {
		t.Fatal(err)
	}
	opentsdb.SetFuse(e, fuse)
	return e
}

func execBody(t *testing.T, e *opentsdb.Engine, start, end, m string) string {
	t.Helper()
	q := mquery(t, start, end, m)
	q.ShowTSUIDs = true
	res, err := e.Execute(context.Background(), q)
	if err != nil {
		return "error: " + err.Error()
	}
	defer res.Release()
	return string(res.AppendJSON(nil, opentsdb.JSONOptions{}))
}

// TestFusedMatchesRaw checks that the fused read (rows folded into
// downsampling buckets as they are decoded) answers byte for byte as the
// raw-point pipeline does, under both read plans, for random int and float
// series split between the store and the head and random downsampled
// queries (fill policies, "all", rates, group-bys).
func TestFusedMatchesRaw(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	rng := rand.New(rand.NewPCG(*randomSeed, 11))
	write := func(fromHour, toHour int) {
		for h := range 6 {
			tags := map[string]string{"host": "h" + strconv.Itoa(h), "dc": []string{"a", "b"}[h%2]}
			if pts := randomPoints(rng, 300, fromHour, toHour, h%3 == 2); len(pts) > 0 {
				s.put(t, "fz", tags, pts...)
			}
		}
	}
	write(0, 3)
	s.flushAll(t)
	write(3, 4)
	ref := s.engineWith(t, read.PlanScan, false)
	fused := []*opentsdb.Engine{s.engineWith(t, read.PlanScan, true), s.engineWith(t, read.PlanSeries, true)}
	aggs := []string{"sum", "avg", "min", "max", "dev", "count", "zimsum", "mimmax", "p95", "median", "last", "first", "none"}
	dss := []string{"30s", "1m", "7m", "1h", "0all", "2h"}
	fills := []string{"", "", "-nan", "-null", "-zero"}
	for i := range *fusedIters {
		start := int64(t0 + rng.IntN(4*3600))
		end := start + 1 + int64(rng.IntN(4*3600))
		parts := []string{aggs[rng.IntN(len(aggs))], dss[rng.IntN(len(dss))] + "-" + aggs[rng.IntN(len(aggs))] + fills[rng.IntN(len(fills))]}
		if rng.IntN(4) == 0 {
			parts = append(parts, "rate")
		}
		gb := []string{"", "host=*", "dc=*"}[rng.IntN(3)]
		m := strings.Join(parts, ":") + ":fz{" + gb + "}"
		want := execBody(t, ref, sec(start), sec(end), m)
		for k, e := range fused {
			if got := execBody(t, e, sec(start), sec(end), m); got != want {
				t.Fatalf("query %d %s %d-%d, plan %d: fused\n%s\nraw\n%s", i, m, start, end, k, got, want)
			}
		}
	}
}
