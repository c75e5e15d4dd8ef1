package agg

import (
	"math"
	"slices"
	"testing"
)

var nan = math.NaN()

func mustLookup(t testing.TB, name string) *Aggregator {
	t.Helper()
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("no aggregator %q", name)
	}
	return a
}

func runFloat(a *Aggregator, vals ...float64) float64 {
	c := NewAccumulator(a)
	for _, v := range vals {
		c.AddFloat(v)
	}
	return c.Float()
}

func runInt(a *Aggregator, vals ...int64) int64 {
	c := NewAccumulator(a)
	for _, v := range vals {
		c.AddInt(v)
	}
	return c.Int()
}

// sameFloat is equality that also matches NaN with NaN.
func sameFloat(a, b float64) bool { return a == b || (a != a && b != b) }

// Expected values below are worked out by hand from OpenTSDB 2.4's
// Aggregators.java and commons-math's Percentile.
func TestAggregatorsFloat(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"sum", []float64{1, 2.5, nan, 4}, 7.5},
		{"sum", []float64{nan, nan}, nan},
		{"zimsum", []float64{1, 2}, 3},
		{"pfsum", []float64{-1, 2}, 1},
		{"min", []float64{nan, 3, -2, 5}, -2},
		{"min", []float64{nan}, nan},
		{"max", []float64{3, nan, 9, 5}, 9},
		{"mimmin", []float64{3, math.MaxFloat64}, 3},
		{"mimmax", []float64{-math.MaxFloat64, -7}, -7},
		{"avg", []float64{1, 2, nan, 4}, 7.0 / 3},
		{"avg", []float64{nan}, nan},
		{"dev", []float64{1, 3}, 1},                            // population: sqrt(2/2)
		{"dev", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 2},          // textbook population sd
		{"dev", []float64{42}, 0},                              // one value
		{"dev", []float64{nan, 42, nan}, 0},                    // one non-NaN value
		{"dev", []float64{nan}, nan},                           // none
		{"median", []float64{5, 1, 4, 2}, 4},                   // upper median of 1 2 4 5
		{"median", []float64{3, nan, 1, 2}, 2},                 // NaN dropped
		{"mult", []float64{2, 3, 4}, 24},                       //
		{"mult", []float64{2, nan}, nan},                       // NaN not skipped
		{"count", []float64{1, nan, 3}, 2},                     //
		{"first", []float64{nan, 2, 3}, nan},                   // raw first
		{"last", []float64{1, 2, 3.5}, 3.5},                    //
		{"diff", []float64{10, 7, 4.5}, -5.5},                  // last - first
		{"squareSum", []float64{1, 2, nan, 3}, 14},             //
		{"squareSum", []float64{nan}, nan},                     //
		{"none", []float64{6.5}, 6.5},                          //
		{"p50", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 5.5}, // pos 0.5*11=5.5
		{"p90", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 9.9}, // pos 9.9
		{"p99", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10},  // pos 10.89 >= n
		{"p75", []float64{7}, 7},                               // one value
		{"p50", []float64{nan, nan}, nan},                      //
		// The float path ignores R-3 and R-7 (OpenTSDB bug kept): LEGACY.
		{"ep50r3", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5.5},
		{"ep90r7", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 9.9},
	} {
		if got := runFloat(mustLookup(t, tc.name), tc.in...); !sameFloat(got, tc.want) && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestAggregatorsInt(t *testing.T) {
	ten := []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	for _, tc := range []struct {
		name string
		in   []int64
		want int64
	}{
		{"sum", []int64{1, 2, 4}, 7},
		{"sum", []int64{math.MaxInt64, 1}, math.MinInt64}, // wraps like Java
		{"min", []int64{3, -2, 5}, -2},
		{"max", []int64{3, 9, 5}, 9},
		{"avg", []int64{1, 2, 4}, 2},     // 7/3 truncated
		{"avg", []int64{-1, -2, -4}, -2}, // -7/3 toward zero
		{"dev", []int64{1, 3}, 1},
		{"dev", []int64{1, 2}, 0}, // 0.5 truncated
		{"dev", []int64{5}, 0},
		{"median", []int64{5, 1, 4, 2}, 4},
		{"mult", []int64{2, 3, -4}, -24},
		{"count", []int64{1, 2, 3}, 3},
		{"first", []int64{4, 5}, 4},
		{"last", []int64{4, 5}, 5},
		{"diff", []int64{4, 9, 15}, 11},
		{"squareSum", []int64{1, 2, 3}, 14},
		{"none", []int64{8}, 8},
		{"p50", ten, 5},    // 5.5 truncated
		{"p90", ten, 9},    // 9.9 truncated
		{"ep50r3", ten, 5}, // rint(5) -> 5th value
		{"ep75r3", ten, 8}, // rint(7.5) = 8 (half to even) -> 8th value
		{"ep90r7", ten, 9}, // 1+9*0.9 = 9.1 -> 9.1 truncated
		{"ep999r7", ten, 9},
		{"ep50r7", []int64{1, 2, 3, 4}, 2}, // 1+3*0.5 = 2.5 -> 2.5 truncated
		{"ep99r3", []int64{1, 2, 3}, 3},
		{"ep50r3", []int64{1, 2, 3}, 2}, // rint(1.5) = 2
	} {
		if got := runInt(mustLookup(t, tc.name), tc.in...); got != tc.want {
			t.Errorf("%s%v = %d, want %d", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if len(names) != 35 {
		t.Fatalf("%d names: %v", len(names), names)
	}
	for _, n := range []string{"sum", "zimsum", "pfsum", "avg", "min", "max", "mimmin", "mimmax", "dev",
		"median", "mult", "diff", "count", "first", "last", "squareSum", "none",
		"p50", "p75", "p90", "p95", "p99", "p999", "ep50r3", "ep999r3", "ep50r7", "ep999r7"} {
		if !slices.Contains(names, n) {
			t.Errorf("missing %q", n)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("not sorted: %v", names)
	}
	if _, ok := Lookup("SUM"); ok {
		t.Error("lookup is case-sensitive in OpenTSDB")
	}
	for name, want := range map[string]Interpolation{"sum": Lerp, "zimsum": ZIM, "mimmin": Max,
		"mimmax": Min, "pfsum": Prev, "count": ZIM, "p99": Lerp, "squareSum": ZIM, "diff": Lerp} {
		if got := mustLookup(t, name).Interpolation(); got != want {
			t.Errorf("%s interpolates %v, want %v", name, got, want)
		}
	}
}

func TestJavaLong(t *testing.T) {
	for in, want := range map[float64]int64{
		1.9: 1, -1.9: -1, nan: 0, math.Inf(1): math.MaxInt64, math.Inf(-1): math.MinInt64, 1e300: math.MaxInt64,
	} {
		if got := javaLong(in); got != want {
			t.Errorf("javaLong(%v) = %d, want %d", in, got, want)
		}
	}
}

func TestAccumulatorReuseNoAlloc(t *testing.T) {
	c := NewAccumulator(mustLookup(t, "p95"))
	vals := []float64{5, 3, 1, 4, 2}
	run := func() {
		c.Reset(mustLookup(t, "p95"))
		for _, v := range vals {
			c.AddFloat(v)
		}
		_ = c.Float()
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%v allocs per warm run", n)
	}
}

// TestFloatOne: floatOne answers what an accumulator fed the one value
// does, bit for bit (NaN as NaN), for every aggregator it takes.
func TestFloatOne(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, -2.5e300, 5e-324, math.MaxFloat64,
		math.Inf(1), math.Inf(-1), nan, 61.34722222222222}
	taken := 0
	for _, name := range Names() {
		a := mustLookup(t, name)
		for _, v := range vals {
			got, ok := floatOne(a, v)
			if !ok {
				continue
			}
			taken++
			want := runFloat(a, v)
			if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
				t.Errorf("floatOne(%s, %v) = %v, the accumulator gives %v", name, v, got, want)
			}
		}
	}
	if taken < 4*len(vals) { // sum, avg, min, max and their aliases
		t.Errorf("floatOne took %d cases, want at least %d", taken, 4*len(vals))
	}
}
