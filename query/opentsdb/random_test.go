package opentsdb_test

import (
	"flag"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
)

var (
	randomIters = flag.Int("query.iters", 40, "random queries TestQueryRandom compares with the reference")
	randomSeed  = flag.Uint64("query.seed", 1, "seed of TestQueryRandom's data and queries")
)

// TestQueryRandom writes random integer series at random times (two hours
// flushed to the store, the third in the head) and compares random
// queries (aggregator, group-by, filters, downsampling) with the
// reference, interpolation included.
func TestQueryRandom(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	rng := rand.New(rand.NewPCG(*randomSeed, 7))
	var all []map[string]string
	for h := range 4 {
		for _, dc := range []string{"a", "b"} {
			tags := map[string]string{"host": "h" + strconv.Itoa(h), "dc": dc}
			if rng.IntN(3) == 0 {
				tags["rack"] = "r" + strconv.Itoa(rng.IntN(2))
			}
			all = append(all, tags)
		}
	}
	writeRandom := func(fromHour, toHour int) {
		for _, tags := range all {
			if pts := randomPoints(rng, 150, fromHour, toHour, false); len(pts) > 0 {
				s.put(t, "rnd", tags, pts...)
			}
		}
	}
	writeRandom(0, 2)
	s.flushAll(t)
	writeRandom(2, 3)
	points := 0
	defer func() { t.Logf("%d queries, %d reference points compared", *randomIters, points) }()
	for i := range *randomIters {
		m, spec := randomQuery(rng)
		q := mquery(t, sec(spec.start/1000), sec(spec.end/1000), m)
		want := refRun(t, s, spec)
		if len(want) == 0 {
			if got := s.execJSON(t, q); got != "[]" {
				t.Errorf("query %d %s %d-%d: %s, want []", i, m, spec.start, spec.end, got)
			}
			continue
		}
		for _, g := range want {
			points += len(g.pts)
		}
		compareAll(t, "query "+strconv.Itoa(i)+" "+m+" "+sec(spec.start)+"-"+sec(spec.end), s.exec(t, q), want, spec.dsFill == "null")
	}
}

// randomPoints draws up to n points (how many from rng) at distinct
// seconds in hours [fromHour, toHour) after t0, values in [-1000, 1000]:
// integers, or float64 sevenths with float.
func randomPoints(rng *rand.Rand, n, fromHour, toHour int, float bool) []series.Point {
	seen := map[int64]bool{}
	var pts []series.Point
	for range rng.IntN(n) {
		ts := int64(t0 + fromHour*3600 + rng.IntN((toHour-fromHour)*3600))
		if seen[ts] {
			continue
		}
		seen[ts] = true
		if float {
			pts = append(pts, series.Float64Point(ts*1000, float64(rng.IntN(2001)-1000)/7))
		} else {
			pts = append(pts, series.IntPoint(ts*1000, int64(rng.IntN(2001)-1000)))
		}
	}
	return pts
}

// randomQuery returns an m= sub-query and the same for the reference.
func randomQuery(rng *rand.Rand) (string, refSpec) {
	start := int64(t0 + rng.IntN(3*3600))
	sp := refSpec{metric: "rnd", agg: []string{"sum", "avg", "min", "max"}[rng.IntN(4)],
		start: start * 1000, end: (start + 1 + int64(rng.IntN(3*3600))) * 1000}
	parts := []string{sp.agg}
	if rng.IntN(2) == 0 {
		ds := []struct {
			s   string
			ms  int64
			agg string
		}{{"1m-avg", 60000, "avg"}, {"5m-sum", 300000, "sum"}, {"10m-max", 600000, "max"}, {"15m-min", 900000, "min"}}[rng.IntN(4)]
		sp.dsFill = []string{"", "", "nan", "null", "zero"}[rng.IntN(5)]
		if sp.dsFill != "" {
			ds.s += "-" + sp.dsFill
		}
		parts = append(parts, ds.s)
		sp.dsInterval, sp.dsAgg = ds.ms, ds.agg
		sp.start -= sp.start % ds.ms // an aligned start keeps the first bucket
	}
	var gb, other []string
	for _, f := range []struct {
		k, v, typ string
	}{{"host", "*", "wildcard"}, {"dc", "*", "wildcard"}, {"host", "h1|h2", "literal_or"}, {"dc", "b", "literal_or"}, {"rack", "*", "wildcard"}} {
		switch rng.IntN(4) {
		case 0:
			gb = append(gb, f.k+"="+f.v)
			sp.filters = append(sp.filters, tsquery.Filter{Type: f.typ, Tagk: f.k, Filter: f.v, GroupBy: true})
		case 1:
			other = append(other, f.k+"="+f.v)
			sp.filters = append(sp.filters, tsquery.Filter{Type: f.typ, Tagk: f.k, Filter: f.v})
		}
	}
	m := strings.Join(parts, ":") + ":rnd{" + strings.Join(gb, ",") + "}{" + strings.Join(other, ",") + "}"
	return m, sp
}
