package agg

import (
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/tsd-db/tsd/series"
)

var modelIters = flag.Int("agg.iters", 300, "random group-by cases checked against the naive model")

// The naive model: for every timestamp any series has in the window, each
// series that has started and not ended contributes its own value or one
// interpolated from its neighbours; the integer path applies when none of
// the points a series can see (its last point so far and its next one) is a
// float. The aggregates are textbook loops.

func modelValue(s []series.Point, x int64, interp Interpolation, integral bool) (float64, int64, bool) {
	if len(s) == 0 || x < s[0].T || x > s[len(s)-1].T {
		return 0, 0, false
	}
	k := sort.Search(len(s), func(k int) bool { return s[k].T > x }) - 1
	p0 := s[k]
	if p0.T == x {
		return p0.Float(), p0.Int(), true
	}
	p1 := s[k+1]
	switch interp {
	case ZIM:
		return 0, 0, true
	case Max:
		return math.MaxFloat64, math.MaxInt64, true
	case Min:
		return -math.MaxFloat64, math.MinInt64, true
	case Prev:
		return p0.Float(), p0.Int(), true
	}
	if integral {
		y0, y1 := p0.Int(), p1.Int()
		return 0, y0 + (x-p0.T)*(y1-y0)/(p1.T-p0.T), true
	}
	y0, y1 := p0.Float(), p1.Float()
	return y0 + (y1-y0)*float64(x-p0.T)/float64(p1.T-p0.T), 0, true
}

// modelIntegral reports whether no point visible at x is a float.
func modelIntegral(ss [][]series.Point, x int64) bool {
	for _, s := range ss {
		if len(s) == 0 || x > s[len(s)-1].T {
			continue
		}
		k := sort.Search(len(s), func(k int) bool { return s[k].T > x })
		if k < len(s) && !s[k].IsInt() {
			return false
		}
		if k > 0 && !s[k-1].IsInt() {
			return false
		}
	}
	return true
}

func modelFloat(name string, v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	switch name {
	case "sum", "zimsum", "pfsum":
		return sum
	case "avg":
		return sum / float64(len(v))
	case "min", "mimmin":
		return slices.Min(v)
	case "max", "mimmax":
		return slices.Max(v)
	case "count":
		return float64(len(v))
	case "first":
		return v[0]
	case "last":
		return v[len(v)-1]
	case "diff":
		return v[len(v)-1] - v[0]
	case "median":
		c := slices.Clone(v)
		slices.Sort(c)
		return c[len(c)/2]
	case "squareSum":
		sq := 0.0
		for _, x := range v {
			sq += x * x
		}
		return sq
	case "dev":
		mean, ss := sum/float64(len(v)), 0.0
		for _, x := range v {
			ss += (x - mean) * (x - mean)
		}
		return math.Sqrt(ss / float64(len(v)))
	}
	panic(name)
}

func modelInt(name string, v []int64) int64 {
	var sum int64
	for _, x := range v {
		sum += x
	}
	switch name {
	case "sum", "zimsum", "pfsum":
		return sum
	case "avg":
		return sum / int64(len(v))
	case "min", "mimmin":
		return slices.Min(v)
	case "max", "mimmax":
		return slices.Max(v)
	case "count":
		return int64(len(v))
	case "first":
		return v[0]
	case "last":
		return v[len(v)-1]
	case "diff":
		return v[len(v)-1] - v[0]
	case "median":
		c := slices.Clone(v)
		slices.Sort(c)
		return c[len(c)/2]
	case "squareSum":
		var sq int64
		for _, x := range v {
			sq += x * x
		}
		return sq
	case "dev":
		f := make([]float64, len(v))
		for k, x := range v {
			f[k] = float64(x)
		}
		return int64(modelFloat("dev", f))
	}
	panic(name)
}

// model computes the expected output of a group over [start, end].
func model(name string, interp Interpolation, in [][]series.Point, start, end int64) []want {
	var ss [][]series.Point
	var xs []int64
	for _, s := range in {
		k := sort.Search(len(s), func(k int) bool { return s[k].T >= start })
		ss = append(ss, s[k:])
		for _, p := range s[k:] {
			if p.T <= end {
				xs = append(xs, p.T)
			}
		}
	}
	slices.Sort(xs)
	var out []want
	for _, x := range slices.Compact(xs) {
		integral := modelIntegral(ss, x)
		var fv []float64
		var iv []int64
		for _, s := range ss {
			f, i, ok := modelValue(s, x, interp, integral)
			if ok {
				fv, iv = append(fv, f), append(iv, i)
			}
		}
		if integral {
			out = append(out, want{t: x, v: float64(modelInt(name, iv))})
		} else {
			out = append(out, want{t: x, v: modelFloat(name, fv), float: true})
		}
	}
	return out
}

func randomSeries(r *rand.Rand) [][]series.Point {
	ss := make([][]series.Point, 1+r.IntN(5))
	for k := range ss {
		t := int64(r.IntN(100))
		for range r.IntN(9) {
			t += 1 + int64(r.IntN(50))
			v := int64(r.IntN(101) - 50)
			if r.IntN(10) == 0 {
				ss[k] = append(ss[k], series.Float64Point(t, float64(v)+0.5))
			} else {
				ss[k] = append(ss[k], series.IntPoint(t, v))
			}
		}
	}
	return ss
}

func closeEnough(name string, got series.Point, w want) bool {
	if got.T != w.t || got.IsInt() == w.float {
		return false
	}
	if got.IsInt() {
		d := got.Int() - int64(w.v)
		return d == 0 || (name == "dev" && (d == 1 || d == -1)) // dev truncates a float
	}
	g := got.Float()
	return g == w.v || math.Abs(g-w.v) <= 1e-9*max(1, math.Abs(w.v))
}

func TestGroupByModel(t *testing.T) {
	names := []string{"sum", "zimsum", "pfsum", "avg", "min", "max", "mimmin", "mimmax", "count",
		"first", "last", "diff", "median", "squareSum", "dev"}
	r := rand.New(rand.NewPCG(1, 2))
	g := &GroupBy{}
	for n := 0; n < *modelIters; n++ {
		ss := randomSeries(r)
		name := names[r.IntN(len(names))]
		a := mustLookup(t, name)
		start, end := int64(r.IntN(150)), int64(150+r.IntN(400))
		g = NewGroupBy(g, window(a, start, end), iters(ss...))
		got := collect(t, g)
		exp := model(name, a.Interpolation(), ss, start, end)
		ok := len(got) == len(exp)
		for k := 0; ok && k < len(got); k++ {
			ok = closeEnough(name, got[k], exp[k])
		}
		if !ok {
			t.Fatalf("case %d %s [%d,%d] %v:\n got %v\nwant %v", n, name, start, end, ss, got, exp)
		}
	}
}
