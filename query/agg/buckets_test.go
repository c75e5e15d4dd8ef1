package agg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/internal/series"
)

// pushSeries folds ss into Buckets reset with spec, each series pushed in
// random slices as the read path pushes rows.
func pushSeries(r *rand.Rand, spec Spec, ss [][]series.Point, reuse []Buckets) []*Buckets {
	out := make([]*Buckets, len(ss))
	for k, s := range ss {
		b := &reuse[k]
		b.Reset(spec)
		for len(s) > 0 {
			n := min(len(s), r.IntN(6))
			b.Push(s[:n])
			s = s[n:]
		}
		b.Finish()
		out[k] = b
	}
	return out
}

// TestBucketsMatchGroupBy checks that GroupByBuckets over pushed series is
// bit for bit GroupBy over the same series pulled raw, for random series,
// aggregators, intervals, fill policies, "all" and rates.
func TestBucketsMatchGroupBy(t *testing.T) {
	names := []string{"sum", "zimsum", "pfsum", "avg", "min", "max", "mimmin", "mimmax", "count",
		"first", "last", "diff", "median", "squareSum", "dev", "p90", "mult"}
	r := rand.New(rand.NewPCG(3, 4))
	var g1, g2 *GroupBy
	reuse := make([]Buckets, 8)
	for n := 0; n < *modelIters*4; n++ {
		ss := randomSeries(r)
		for _, s := range ss {
			for k := range s {
				if r.IntN(20) == 0 {
					s[k] = series.Float64Point(s[k].T, math.NaN())
				}
			}
		}
		ds := &Downsample{Agg: mustLookup(t, names[r.IntN(len(names))]), Interval: int64(1 + r.IntN(60)),
			Fill: FillPolicy(r.IntN(5)), FillValue: 7}
		if r.IntN(8) == 0 {
			ds.All, ds.Interval = true, 0
		}
		start := int64(r.IntN(150))
		end := start + int64(r.IntN(400))
		spec := Spec{Agg: mustLookup(t, names[r.IntN(len(names))]), Downsample: ds, QueryStart: start, QueryEnd: end,
			Rate: r.IntN(4) == 0, RateOptions: DefaultRateOptions()}
		if r.IntN(2) == 0 {
			spec.Start, spec.End = max(0, start-int64(r.IntN(40))), end+int64(r.IntN(40))
		}
		if !PushSpec(&spec) {
			t.Fatalf("case %d: PushSpec false for %+v", n, ds)
		}
		g1 = NewGroupBy(g1, spec, iters(ss...))
		want, err1 := collectErr(g1)
		g2 = NewGroupByBuckets(g2, spec, pushSeries(r, spec, ss, reuse))
		got, err2 := collectErr(g2)
		if (err1 == nil) != (err2 == nil) || len(got) != len(want) {
			t.Fatalf("case %d %s: got %v (%v), want %v (%v)\nseries %v", n, ds, got, err2, want, err1, ss)
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("case %d %s: point %d: got %v, want %v\nseries %v", n, ds, k, got[k], want[k], ss)
			}
		}
	}
}

func collectErr(g *GroupBy) ([]series.Point, error) {
	var out []series.Point
	for g.Next() {
		out = append(out, g.At())
	}
	return out, g.Err()
}

// TestBucketsRejectCalendar checks that a calendar downsampling is refused.
func TestBucketsRejectCalendar(t *testing.T) {
	spec := Spec{Agg: mustLookup(t, "sum"), QueryStart: 0, QueryEnd: 10, RateOptions: DefaultRateOptions(),
		Downsample: &Downsample{Agg: mustLookup(t, "sum"), Interval: 1000, Calendar: true, CalendarN: 1, CalendarUnit: 1}}
	if PushSpec(&spec) {
		t.Fatal("PushSpec accepted a calendar downsampling")
	}
	g := NewGroupByBuckets(nil, spec, nil)
	if g.Next() || g.Err() == nil {
		t.Fatalf("NewGroupByBuckets ran a calendar spec: err %v", g.Err())
	}
}
