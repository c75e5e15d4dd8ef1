package agg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/series"
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
			pushMaybeSum(b, s[:n], r.IntN(2) == 0)
			s = s[n:]
		}
		b.Finish()
		out[k] = b
	}
	return out
}

// pushMaybeSum pushes pts, with PushSum when sum is set and the points
// qualify as a cached row's do for read.SumVisitor (all Ints, n × the
// largest magnitude at most 2^53).
func pushMaybeSum(b *Buckets, pts []series.Point, sum bool) {
	var (
		s      int64
		maxAbs uint64
	)
	for _, p := range pts {
		x := p.Int()
		a := uint64(x)
		if x < 0 {
			a = uint64(-x)
		}
		if p.Kind != series.Int || a > 1<<53 {
			sum = false
		}
		maxAbs = max(maxAbs, a)
		s += x
	}
	if sum && maxAbs != 0 && uint64(len(pts)) > (1<<53)/maxAbs {
		sum = false
	}
	if sum {
		b.PushSum(pts, s, maxAbs)
	} else {
		b.Push(pts)
	}
}

// TestPushSumMatchesPush checks that PushSum leaves every aggregator's
// buckets bit for bit as Push does, for integers around the exact-sum
// bounds (2^31 per point, 2^51 for the running sum) and floats between.
func TestPushSumMatchesPush(t *testing.T) {
	names := []string{"sum", "avg", "zimsum", "min", "max", "count", "dev", "last"}
	r := rand.New(rand.NewPCG(5, 6))
	mags := []int64{50, 1<<31 - 1, 1 << 31, 1 << 40, 1 << 50}
	for n := 0; n < *modelIters*8; n++ {
		var pts []series.Point
		tm := int64(r.IntN(100))
		mag := mags[r.IntN(len(mags))]
		for range r.IntN(40) {
			tm += 1 + int64(r.IntN(30))
			v := r.Int64N(2*mag+1) - mag
			if r.IntN(15) == 0 {
				pts = append(pts, series.Float64Point(tm, float64(v)+0.25))
			} else {
				pts = append(pts, series.IntPoint(tm, v))
			}
		}
		ds := &Downsample{Agg: mustLookup(t, names[r.IntN(len(names))]), Interval: int64(1 + r.IntN(200))}
		spec := Spec{Agg: ds.Agg, Downsample: ds, QueryStart: 0, QueryEnd: 1 << 20}
		var want, got Buckets
		want.Reset(spec)
		got.Reset(spec)
		for s := pts; len(s) > 0; {
			k := min(len(s), 1+r.IntN(12))
			want.Push(s[:k])
			pushMaybeSum(&got, s[:k], true)
			s = s[k:]
		}
		want.Finish()
		got.Finish()
		if len(got.out) != len(want.out) {
			t.Fatalf("case %d %s: %d buckets, want %d", n, ds, len(got.out), len(want.out))
		}
		for k := range got.out {
			if got.out[k] != want.out[k] {
				t.Fatalf("case %d %s: bucket %d: got %v, want %v", n, ds, k, got.out[k], want.out[k])
			}
		}
	}
}

// TestBucketsMatchGroupBy checks that GroupByBuckets over pushed series is
// bit for bit GroupBy over the same series pulled raw, for random series,
// aggregators, intervals, fill policies, "all" and rates; and so is its
// output taken by AppendSingle (then Next), half the cases having one
// series.
func TestBucketsMatchGroupBy(t *testing.T) {
	names := []string{"sum", "zimsum", "pfsum", "avg", "min", "max", "mimmin", "mimmax", "count",
		"first", "last", "diff", "median", "squareSum", "dev", "p90", "mult"}
	r := rand.New(rand.NewPCG(3, 4))
	var g1, g2, g3 *GroupBy
	reuse := make([]Buckets, 8)
	singles := 0
	for n := 0; n < *modelIters*4; n++ {
		ss := randomSeries(r)
		if r.IntN(2) == 0 && len(ss) > 1 {
			ss = ss[:1]
		}
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
		g3 = NewGroupByBuckets(g3, spec, pushSeries(r, spec, ss, reuse))
		got, ok := g3.AppendSingle(nil)
		if ok {
			singles++
		}
		rest, err3 := collectErr(g3)
		got = append(got, rest...)
		if (err1 == nil) != (err3 == nil) || len(got) != len(want) {
			t.Fatalf("case %d %s: AppendSingle %v: got %v (%v), want %v (%v)\nseries %v", n, ds, ok, got, err3, want, err1, ss)
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("case %d %s: AppendSingle %v: point %d: got %v, want %v\nseries %v", n, ds, ok, k, got[k], want[k], ss)
			}
		}
	}
	if singles < *modelIters/8 {
		t.Fatalf("AppendSingle took %d of %d cases", singles, *modelIters*4)
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

// TestAddPointsMatchesAddFloat checks the integer fast path of the sum at
// its edges: values at and past 2^31, running sums near 2^51 and 2^53,
// fractional running sums and NaN, each against AddFloat one by one.
func TestAddPointsMatchesAddFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	edges := []int64{0, 1, -1, 1<<31 - 1, -1 << 31, 1 << 31, -1<<31 - 1, 1 << 52, -1 << 53, 1<<62 + 1, -1 << 63}
	starts := []float64{0, 0.5, 0.1, 1e-7, 123456.789, 1 << 51, 1<<51 - 1, -(1<<51 - 1), 1 << 53, 3}
	for _, name := range []string{"sum", "avg"} {
		a := mustLookup(t, name)
		for n := 0; n < 2000; n++ {
			pts := make([]series.Point, 1+r.IntN(40))
			for k := range pts {
				switch r.IntN(10) {
				case 0:
					pts[k] = series.IntPoint(int64(k), edges[r.IntN(len(edges))])
				case 1:
					pts[k] = series.Float64Point(int64(k), []float64{math.NaN(), 0.1, 1e300}[r.IntN(3)])
				default:
					pts[k] = series.IntPoint(int64(k), r.Int64N(1<<31)-1<<30)
				}
			}
			start := starts[r.IntN(len(starts))]
			var want, got Accumulator
			want.Reset(a)
			got.Reset(a)
			want.AddFloat(start)
			got.AddFloat(start)
			for _, p := range pts {
				want.AddFloat(p.Float())
			}
			addPoints(&got, pts)
			if w, g := want.Float(), got.Float(); math.Float64bits(w) != math.Float64bits(g) && !(w != w && g != g) {
				t.Fatalf("%s from %v over %v: got %v, want %v", name, start, pts, g, w)
			}
		}
	}
}
