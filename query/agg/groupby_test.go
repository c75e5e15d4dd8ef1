package agg

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
	_ "time/tzdata" // the zone tests run on machines without a zone database

	"github.com/tsd-db/tsd/series"
)

// ints builds integer points from t, v pairs.
func ints(tv ...int64) []series.Point {
	var pts []series.Point
	for i := 0; i+1 < len(tv); i += 2 {
		pts = append(pts, series.IntPoint(tv[i], tv[i+1]))
	}
	return pts
}

// iters wraps point slices as iterators.
func iters(ss ...[]series.Point) []series.Iterator {
	out := make([]series.Iterator, len(ss))
	for i, s := range ss {
		out[i] = series.NewSliceIterator(nil, s)
	}
	return out
}

// window is a spec whose query range and aggregation window are [start, end].
func window(a *Aggregator, start, end int64) Spec {
	return Spec{Agg: a, QueryStart: start, QueryEnd: end, Start: start, End: end, RateOptions: DefaultRateOptions()}
}

func collect(t *testing.T, g *GroupBy) []series.Point {
	t.Helper()
	var out []series.Point
	for g.Next() {
		out = append(out, g.At())
	}
	if err := g.Err(); err != nil {
		t.Fatalf("GroupBy: %v", err)
	}
	return out
}

// want is an expected output point; kind tells the integer path from the
// float one.
type want struct {
	t     int64
	v     float64
	float bool
}

func i(t, v int64) want         { return want{t: t, v: float64(v)} }
func f(t int64, v float64) want { return want{t: t, v: v, float: true} }
func (w want) String() string   { return fmt.Sprintf("%d:%v(float=%v)", w.t, w.v, w.float) }
func describe(p series.Point) string {
	return fmt.Sprintf("%d:%v(float=%v)", p.T, p.Float(), !p.IsInt())
}

func check(t *testing.T, name string, got []series.Point, exp []want) {
	t.Helper()
	ok := len(got) == len(exp)
	for k := 0; ok && k < len(got); k++ {
		g, w := got[k], exp[k]
		ok = g.T == w.t && g.IsInt() == !w.float && (sameFloat(g.Float(), w.v) || math.Abs(g.Float()-w.v) <= 1e-12*math.Abs(w.v))
		if g.IsInt() && float64(g.Int()) != w.v {
			ok = false
		}
	}
	if !ok {
		var gs []string
		for _, p := range got {
			gs = append(gs, describe(p))
		}
		t.Errorf("%s:\n got %v\nwant %v", name, gs, exp)
	}
}

func run(t *testing.T, spec Spec, ss ...[]series.Point) []series.Point {
	t.Helper()
	return collect(t, NewGroupBy(nil, spec, iters(ss...)))
}

// Expected values are worked out by hand from the interpolation rules.
func TestGroupByInterpolation(t *testing.T) {
	a := func(n string) *Aggregator { return mustLookup(t, n) }
	cases := []struct {
		name string
		spec Spec
		in   [][]series.Point
		want []want
	}{
		{"lerp sum", window(a("sum"), 0, 100), [][]series.Point{ints(0, 10, 20, 30), ints(10, 5)},
			// at 10, A is 10+(10-0)*(30-10)/20 = 20; B has ended by 20.
			[]want{i(0, 10), i(10, 25), i(20, 30)}},
		{"integer lerp truncates", window(a("sum"), 0, 5000), [][]series.Point{ints(0, 0, 3000, 10), ints(1000, 7)},
			[]want{i(0, 0), i(1000, 3+7), i(3000, 10)}},
		{"toward zero", window(a("sum"), 0, 5000), [][]series.Point{ints(0, 0, 3000, -10), ints(1000, 7)},
			[]want{i(0, 0), i(1000, -3+7), i(3000, -10)}},
		{"a float in the window switches paths", window(a("sum"), 0, 5000),
			[][]series.Point{ints(0, 0, 3000, 10), {series.Float64Point(1000, 7.5)}},
			// at 0 B's first point (a float) is already visible; at 3000 B has ended.
			[]want{f(0, 0), f(1000, 10.0/3+7.5), i(3000, 10)}},
		{"zimsum", window(a("zimsum"), 0, 100), [][]series.Point{ints(0, 1, 20, 3), ints(10, 5)},
			[]want{i(0, 1), i(10, 5), i(20, 3)}},
		{"mimmin", window(a("mimmin"), 0, 100), [][]series.Point{ints(0, 1, 20, 3), ints(10, 5)},
			[]want{i(0, 1), i(10, 5), i(20, 3)}},
		{"min lerps", window(a("min"), 0, 100), [][]series.Point{ints(0, 1, 20, 3), ints(10, 5)},
			[]want{i(0, 1), i(10, 2), i(20, 3)}},
		{"mimmax", window(a("mimmax"), 0, 100), [][]series.Point{ints(0, 1, 20, 3), ints(10, -5)},
			[]want{i(0, 1), i(10, -5), i(20, 3)}},
		{"mimmax float", window(a("mimmax"), 0, 100), [][]series.Point{ints(0, 1, 20, 3), {series.Float64Point(10, -5.5)}},
			[]want{f(0, 1), f(10, -5.5), i(20, 3)}},
		{"pfsum", window(a("pfsum"), 0, 100), [][]series.Point{ints(0, 1, 20, 3), ints(10, 5)},
			[]want{i(0, 1), i(10, 6), i(20, 3)}},
		{"count", window(a("count"), 0, 100), [][]series.Point{ints(0, 1, 20, 3), ints(10, 5)},
			[]want{i(0, 1), i(10, 2), i(20, 1)}},
		{"integer avg", window(a("avg"), 0, 100), [][]series.Point{ints(0, 1, 20, 4), ints(10, 1)},
			// A at 10 is 1+10*3/20 = 2; (2+1)/2 truncates to 1.
			[]want{i(0, 1), i(10, 1), i(20, 4)}},
		{"clipped to the query range", Spec{Agg: a("sum"), QueryStart: 10, QueryEnd: 20, Start: 0, End: 30},
			[][]series.Point{ints(0, 0, 30, 30), ints(10, 100, 20, 200)},
			[]want{i(10, 110), i(20, 220)}},
		{"points past the end interpolate", window(a("sum"), 0, 60), [][]series.Point{ints(0, 0, 100, 100), ints(50, 1)},
			[]want{i(0, 0), i(50, 51)}},
		{"points before the start are skipped", window(a("sum"), 5, 60), [][]series.Point{ints(0, 5, 10, 6)},
			[]want{i(10, 6)}},
		{"none passes one series through", window(a("none"), 0, 100), [][]series.Point{ints(0, 1, 20, 3)},
			[]want{i(0, 1), i(20, 3)}},
		{"no series", window(a("sum"), 0, 100), nil, nil},
	}
	for _, tc := range cases {
		check(t, tc.name, run(t, tc.spec, tc.in...), tc.want)
	}
}

func TestGroupByNoneRejectsGroups(t *testing.T) {
	g := NewGroupBy(nil, window(mustLookup(t, "none"), 0, 100), iters(ints(0, 1), ints(0, 2)))
	if g.Next() || !errors.Is(g.Err(), ErrNoneGroup) {
		t.Errorf("err %v", g.Err())
	}
	g = NewGroupBy(g, Spec{QueryEnd: 1}, nil)
	if g.Next() || !errors.Is(g.Err(), ErrSpec) {
		t.Errorf("nil aggregator: err %v", g.Err())
	}
}

// seq returns n integer points every step ms from t0 with values v0, v0+1...
func seq(t0, step int64, n int, v0 int64) []series.Point {
	pts := make([]series.Point, n)
	for k := range pts {
		pts[k] = series.IntPoint(t0+int64(k)*step, v0+int64(k))
	}
	return pts
}

func ds(t testing.TB, s string) *Downsample {
	t.Helper()
	d, err := ParseDownsample(s)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

func TestGroupByDownsample(t *testing.T) {
	a := func(n string) *Aggregator { return mustLookup(t, n) }
	const m = 60000
	withDS := func(agg, spec string, start, end int64) Spec {
		s := window(a(agg), start, end)
		s.Downsample = ds(t, spec)
		return s
	}
	cases := []struct {
		name string
		spec Spec
		in   [][]series.Point
		want []want
	}{
		{"1m-avg of integers is float", withDS("sum", "1m-avg", 0, 2*m), [][]series.Point{seq(0, 10000, 12, 1)},
			[]want{f(0, 3.5), f(m, 9.5)}}, // avg(1..6), avg(7..12)
		{"empty bucket interpolated", withDS("sum", "1m-sum", 0, 3*m),
			[][]series.Point{ints(0, 1, 10000, 2, 2*m, 10), ints(m+5000, 7)},
			// A's buckets 0:3 and 120000:10; at 60000 A lerps to 6.5.
			[]want{f(0, 3), f(m, 6.5+7), f(2*m, 10)}},
		{"nan fill is skipped by the group", withDS("sum", "1m-sum-nan", 0, 3*m),
			[][]series.Point{ints(0, 1, 2*m, 10), ints(m, 7)},
			// A fills 60000 with NaN and B with NaN at 0 and 120000.
			[]want{f(0, 1), f(m, 7), f(2*m, 10)}},
		{"all nan stays nan", withDS("sum", "1m-sum-null", 0, 3*m),
			[][]series.Point{ints(0, 1, 2*m, 10)},
			[]want{f(0, 1), f(m, math.NaN()), f(2*m, 10)}},
		{"zero fill", withDS("avg", "1m-sum-zero", 0, 3*m),
			[][]series.Point{ints(0, 1, 2*m, 10), ints(m, 7)},
			[]want{f(0, 0.5), f(m, 3.5), f(2*m, 5)}},
		{"series without points in the window are not filled", withDS("avg", "1m-sum-zero", 0, 3*m),
			[][]series.Point{ints(0, 1, 2*m, 10), nil, ints(10*m, 5)},
			[]want{f(0, 1), f(m, 0), f(2*m, 10)}},
		{"scalar fill", func() Spec {
			s := withDS("sum", "1m-sum-scalar", 0, 3*m)
			s.Downsample.FillValue = 42
			return s
		}(), [][]series.Point{ints(0, 1, 2*m, 10)},
			[]want{f(0, 1), f(m, 42), f(2*m, 10)}},
		{"0all-sum over [QueryStart, QueryEnd)", Spec{Agg: a("sum"), Downsample: ds(t, "0all-sum"),
			QueryStart: 10000, QueryEnd: 50000, Start: 0, End: 3600000},
			[][]series.Point{seq(0, 10000, 7, 1)},
			[]want{f(10000, 2+3+4+5)}},
		{"1m-count", withDS("sum", "1m-count", 0, 2*m), [][]series.Point{seq(0, 20000, 6, 1)},
			[]want{f(0, 3), f(m, 3)}},
		{"first bucket before the start drops the series", withDS("sum", "7m-sum-zero", 60000, 30*m),
			// The fill starts at align(60000) = 0 < Start: OpenTSDB drops it.
			[][]series.Point{seq(60000, m, 10, 1)}, nil},
	}
	for _, tc := range cases {
		check(t, tc.name, run(t, tc.spec, tc.in...), tc.want)
	}
}

// TestGroupByCalendar buckets hourly points by local day in Denver; the
// expected sums are computed here from time.Time's calendar.
func TestGroupByCalendar(t *testing.T) {
	denver, err := time.LoadLocation("America/Denver")
	if err != nil {
		t.Fatal(err) // time/tzdata is linked in: never missing
	}
	start := time.Date(2024, time.March, 9, 0, 0, 0, 0, denver) // DST starts on the 10th
	var pts []series.Point
	sums := map[int64]float64{}
	var days []int64
	for h := 0; h < 72; h++ {
		ts := start.Add(time.Duration(h) * time.Hour)
		pts = append(pts, series.IntPoint(ts.UnixMilli(), int64(h)))
		y, mo, d := ts.Date()
		day := time.Date(y, mo, d, 0, 0, 0, 0, denver).UnixMilli()
		if _, ok := sums[day]; !ok {
			days = append(days, day)
		}
		sums[day] += float64(h)
	}
	spec := window(mustLookup(t, "sum"), start.UnixMilli(), start.Add(96*time.Hour).UnixMilli())
	d := ds(t, "1dc-sum")
	d.Location = denver
	spec.Downsample = d
	var exp []want
	for _, day := range days {
		exp = append(exp, f(day, sums[day]))
	}
	if len(exp) != 4 { // 72 hours from midnight span 4 local days: the DST day has 23 hours
		t.Fatalf("%d days", len(exp))
	}
	check(t, "1dc in Denver", run(t, spec, pts), exp)

	// Weeks start on Sunday: 2024-03-09 is a Saturday.
	spec.Downsample = ds(t, "1wc-count")
	spec.Downsample.Location = denver
	sunday := time.Date(2024, time.March, 10, 0, 0, 0, 0, denver).UnixMilli()
	check(t, "1wc in Denver", run(t, spec, pts), []want{f(sunday, 48)}) // the Saturday bucket starts before Start
}

func TestGroupByRate(t *testing.T) {
	a := func(n string) *Aggregator { return mustLookup(t, n) }
	const s = 1000
	rate := func(opts RateOptions) Spec {
		sp := window(a("sum"), 1000*s, 2000*s)
		sp.Rate, sp.RateOptions = true, opts
		return sp
	}
	def := DefaultRateOptions()
	counter := RateOptions{Counter: true, CounterMax: 300}
	cases := []struct {
		name string
		spec Spec
		in   [][]series.Point
		want []want
	}{
		// The first rate, from (0, 0), is consumed without being emitted.
		{"rate", rate(def), [][]series.Point{ints(1000*s, 100, 1010*s, 200, 1020*s, 250)},
			[]want{f(1010*s, 10), f(1020*s, 5)}},
		{"counter wraps at counterMax", rate(counter), [][]series.Point{ints(1000*s, 100, 1010*s, 250, 1020*s, 50)},
			// 300-250+50 = 100 over 10 s
			[]want{f(1010*s, 15), f(1020*s, 10)}},
		{"float counter", rate(counter), [][]series.Point{
			{series.IntPoint(1000*s, 100), series.Float64Point(1010*s, 250), series.Float64Point(1020*s, 50)}},
			[]want{f(1010*s, 15), f(1020*s, 10)}},
		{"reset value zeroes a wrapped rate above it", rate(RateOptions{Counter: true, CounterMax: 300, ResetValue: 5}),
			[][]series.Point{ints(1000*s, 100, 1010*s, 250, 1020*s, 50, 1030*s, 70)},
			[]want{f(1010*s, 15), f(1020*s, 0), f(1030*s, 2)}},
		{"drop resets", rate(RateOptions{Counter: true, CounterMax: 300, DropResets: true}),
			[][]series.Point{ints(1000*s, 100, 1010*s, 250, 1020*s, 50, 1030*s, 70)},
			[]want{f(1010*s, 15), f(1030*s, 2)}},
		{"not a counter: negative rates stay", rate(def), [][]series.Point{ints(1000*s, 100, 1010*s, 50)},
			[]want{f(1010*s, -5)}},
		{"the first rate stands in for a series not yet started", rate(def),
			[][]series.Point{ints(1000*s, 100, 1010*s, 200, 1020*s, 300), ints(1015*s, 50, 1025*s, 80)},
			// B's first rate is 50/1015 per second; rates are never interpolated.
			[]want{f(1010*s, 10+50.0/1015), f(1020*s, 10+50.0/1015), f(1025*s, 3)}},
		{"rate after downsampling", func() Spec {
			sp := rate(def)
			sp.Downsample = ds(t, "10s-sum")
			return sp
		}(), [][]series.Point{ints(1000*s, 1, 1005*s, 2, 1010*s, 10, 1020*s, 40)},
			// buckets 1000 s: 3, 1010 s: 10, 1020 s: 40
			[]want{f(1010*s, 0.7), f(1020*s, 3)}},
	}
	for _, tc := range cases {
		check(t, tc.name, run(t, tc.spec, tc.in...), tc.want)
	}
}

// errIter yields its points and then fails.
type errIter struct {
	series.SliceIterator
	err error
}

func (e *errIter) Err() error { return e.err }

func TestGroupByErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	it := &errIter{err: boom}
	series.NewSliceIterator(&it.SliceIterator, ints(0, 1, 10, 2))
	g := NewGroupBy(nil, window(mustLookup(t, "sum"), 0, 100), []series.Iterator{it})
	for g.Next() {
	}
	if !errors.Is(g.Err(), boom) {
		t.Errorf("err %v, want %v", g.Err(), boom)
	}

	spec := window(mustLookup(t, "sum"), 1000, 100000)
	spec.Rate = true
	g = NewGroupBy(nil, spec, iters(ints(1000, 1, 1000, 2, 2000, 3)))
	for g.Next() {
	}
	if !errors.Is(g.Err(), ErrTimestampOrder) {
		t.Errorf("err %v, want ErrTimestampOrder", g.Err())
	}
}

func TestGroupBySeekTime(t *testing.T) {
	g := NewGroupBy(nil, window(mustLookup(t, "sum"), 0, 100), iters(ints(0, 1, 10, 2, 20, 3)))
	if !g.SeekTime(5) || g.At().T != 10 || !g.SeekTime(10) || g.At().T != 10 {
		t.Fatalf("SeekTime: %v", g.At())
	}
	if !g.Next() || g.At().T != 20 || g.SeekTime(21) {
		t.Errorf("after seek: %v", g.At())
	}
}
