package gexp

import (
	"math"
	"regexp"
	"sort"
	"strconv"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/series"
)

var topnRE = regexp.MustCompile(`^[0-9]+$`)

// topN reads HighestMax's and HighestCurrent's first argument.
func topN(args []string) (int, error) {
	if len(args) == 0 {
		return 0, bad("Need aggregation window for moving average")
	}
	if !topnRE.MatchString(args[0]) {
		return 0, bad("Unparseable top n value: " + args[0])
	}
	n, err := strconv.ParseInt(args[0], 10, 32)
	if err != nil {
		return 0, bad("Invalid parameter, must be an integer")
	}
	if n < 1 {
		return 0, bad("Top n value must be greater than zero: " + strconv.FormatInt(n, 10))
	}
	return int(n), nil
}

// lane is one series in walk: its current and next points, as
// AggregationIterator keeps them (agg.GroupBy models the same).
type lane struct {
	pts      []series.Point
	i        int // index of nxt in pts
	cur, nxt series.Point
	curOK    bool
	nxtOK    bool
}

// walk replays AggregationIterator over gs with LERP and no rate, as
// HighestMax and HighestCurrent run it: at each timestamp of the union it
// calls visit with the values of the series active there, in series
// order (the misaligned arrays their aggregators fill), as integers when
// no current or next point of any series is a double.
func walk(gs []opentsdb.Group, visit func(x int64, integral bool, ints []int64, floats []float64)) {
	lanes := make([]lane, len(gs))
	floats := 0
	visible := func(l *lane) int {
		n := 0
		if l.curOK && !l.cur.IsInt() {
			n++
		}
		if l.nxtOK && !l.nxt.IsInt() {
			n++
		}
		return n
	}
	for i := range lanes {
		l := &lanes[i]
		l.pts = gs[i].Points
		if len(l.pts) > 0 {
			l.nxt, l.nxtOK, l.i = l.pts[0], true, 1
		}
		floats += visible(l)
	}
	ints := make([]int64, 0, len(gs))
	fls := make([]float64, 0, len(gs))
	for {
		x, found := int64(math.MaxInt64), false
		for i := range lanes {
			l := &lanes[i]
			if !l.nxtOK {
				if l.curOK && !l.cur.IsInt() {
					floats--
				}
				l.curOK = false
				continue
			}
			if l.nxt.T < x {
				x, found = l.nxt.T, true
			}
		}
		if !found {
			return
		}
		for i := range lanes {
			l := &lanes[i]
			if l.nxtOK && l.nxt.T == x {
				floats -= visible(l)
				l.cur, l.curOK = l.nxt, true
				l.nxtOK = l.i < len(l.pts)
				if l.nxtOK {
					l.nxt = l.pts[l.i]
					l.i++
				}
				floats += visible(l)
			}
		}
		ints, fls = ints[:0], fls[:0]
		integral := floats == 0
		for i := range lanes {
			l := &lanes[i]
			if !l.curOK {
				continue
			}
			if integral {
				ints = append(ints, lerpInt(l, x))
			} else {
				fls = append(fls, lerpFloat(l, x))
			}
		}
		visit(x, integral, ints, fls)
	}
}

func lerpInt(l *lane, x int64) int64 {
	y0 := l.cur.Int()
	if l.cur.T == x || !l.nxtOK {
		return y0
	}
	x0, x1, y1 := l.cur.T, l.nxt.T, l.nxt.Int()
	if x == x1 {
		return y1
	}
	return y0 + (x-x0)*(y1-y0)/(x1-x0)
}

func lerpFloat(l *lane, x int64) float64 {
	y0 := l.cur.Float()
	if l.cur.T == x || !l.nxtOK {
		return y0
	}
	x0, x1, y1 := l.cur.T, l.nxt.T, l.nxt.Float()
	if x == x1 {
		return y1
	}
	return y0 + float64(x-x0)*(y1-y0)/float64(x1-x0)
}

// ranker is MaxCacheAggregator or MaxLatestAggregator: per-position
// figures over the misaligned value arrays, zeros past the active series.
type ranker struct {
	longs             []int64
	doubles           []float64
	hasLong, hasDoubl bool
}

func newRanker(n int) *ranker {
	r := &ranker{longs: make([]int64, n), doubles: make([]float64, n)}
	for i := range n {
		r.longs[i], r.doubles[i] = math.MinInt64, math.SmallestNonzeroFloat64 // Double.MIN_VALUE
	}
	return r
}

// top sorts positions by the ranker's figures, highest first, stable
// (Arrays.sort of TopNSortingEntry, -Double.compare), and keeps n.
func (r *ranker) top(gs []opentsdb.Group, n int) ([]opentsdb.Group, error) {
	if len(gs) == 0 {
		return []opentsdb.Group{}, nil
	}
	if !r.hasLong && !r.hasDoubl {
		// No timestamp at all: OpenTSDB sorts null entries.
		return nil, bad("java.lang.NullPointerException")
	}
	vals := make([]float64, len(gs))
	for i := range vals {
		switch {
		case r.hasLong && r.hasDoubl:
			vals[i] = javaMax(float64(r.longs[i]), r.doubles[i])
		case r.hasLong:
			vals[i] = float64(r.longs[i])
		default:
			vals[i] = r.doubles[i]
		}
	}
	pos := make([]int, len(gs))
	for i := range pos {
		pos[i] = i
	}
	sort.SliceStable(pos, func(a, b int) bool { return javaCompare(vals[pos[a]], vals[pos[b]]) > 0 })
	out := make([]opentsdb.Group, 0, min(n, len(gs)))
	for _, p := range pos[:min(n, len(gs))] {
		out = append(out, gs[p])
	}
	return out, nil
}

// javaMax is Math.max(double, double): NaN wins, 0.0 over -0.0.
func javaMax(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	if a == 0 && b == 0 {
		if math.Signbit(a) {
			return b
		}
		return a
	}
	return math.Max(a, b)
}

// javaCompare is Double.compare: -0.0 below 0.0, NaN above everything.
func javaCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if a != a {
		ab = int64(math.Float64bits(math.NaN()))
	}
	if b != b {
		bb = int64(math.Float64bits(math.NaN()))
	}
	switch {
	case ab < bb:
		return -1
	case ab > bb:
		return 1
	}
	return 0
}

// flatten lists every group of every parameter in order.
func flatten(in [][]opentsdb.Group) []opentsdb.Group {
	var gs []opentsdb.Group
	for _, g := range in {
		gs = append(gs, g...)
	}
	return gs
}

// highestMax is HighestMax.evaluate: each position keeps the largest
// value it saw across the timestamps (positions misaligned when a series
// is not active at a timestamp).
func highestMax(in [][]opentsdb.Group, args []string) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	n, err := topN(args)
	if err != nil {
		return nil, err
	}
	gs := flatten(in)
	r := newRanker(len(gs))
	walk(gs, func(_ int64, integral bool, ints []int64, fls []float64) {
		if integral {
			for i := range r.longs {
				v := int64(0)
				if i < len(ints) {
					v = ints[i]
				}
				r.longs[i] = max(r.longs[i], v)
			}
			r.hasLong = true
			return
		}
		for i := range r.doubles {
			v := 0.0
			if i < len(fls) {
				v = fls[i]
			}
			r.doubles[i] = javaMax(r.doubles[i], v)
		}
		r.hasDoubl = true
	})
	return r.top(gs, n)
}

// highestCurrent is HighestCurrent.evaluate: series without points are
// left out; MaxLatestAggregator never advances latest_ts, so each
// timestamp overwrites the figures and the last one of each path ranks.
func highestCurrent(in [][]opentsdb.Group, args []string) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	n, err := topN(args)
	if err != nil {
		return nil, err
	}
	var gs []opentsdb.Group
	for _, g := range flatten(in) {
		if len(g.Points) > 0 {
			gs = append(gs, g)
		}
	}
	r := newRanker(len(gs))
	walk(gs, func(_ int64, integral bool, ints []int64, fls []float64) {
		if integral {
			clear(r.longs)
			copy(r.longs, ints)
			r.hasLong = true
			return
		}
		clear(r.doubles)
		copy(r.doubles, fls)
		r.hasDoubl = true
	})
	return r.top(gs, n)
}
