package agg

import "slices"

// Interpolation is what a series contributes to a group at a timestamp where
// it has no point of its own (OpenTSDB's Aggregators.Interpolation).
type Interpolation uint8

const (
	// Lerp interpolates linearly between the series' points on either side.
	Lerp Interpolation = iota
	// ZIM contributes zero ("zero if missing").
	ZIM
	// Max contributes the largest value, so a min never picks it (mimmin).
	Max
	// Min contributes the smallest value, so a max never picks it (mimmax).
	Min
	// Prev contributes the series' previous value (pfsum).
	Prev
)

// String returns OpenTSDB's name of the interpolation.
func (i Interpolation) String() string {
	switch i {
	case Lerp:
		return "LERP"
	case ZIM:
		return "ZIM"
	case Max:
		return "MAX"
	case Min:
		return "MIN"
	case Prev:
		return "PREV"
	}
	return "unknown"
}

// Estimation is the commons-math Percentile estimator of a percentile
// aggregator.
type Estimation uint8

const (
	// Legacy is commons-math's default: index (N+1)p, linear between neighbours.
	Legacy Estimation = iota
	// R3 is R's type 3: index rint(Np), the nearest order statistic.
	R3
	// R7 is R's type 7 (Excel): index 1+(N-1)p, linear between neighbours.
	R7
)

type kind uint8

const (
	kSum kind = iota
	kMin
	kMax
	kAvg
	kDev
	kMedian
	kMult
	kDiff
	kCount
	kFirst
	kLast
	kSquareSum
	kNone
	kPercentile
)

// Aggregator is one of OpenTSDB's named aggregation functions. Values are
// immutable and shared; obtain them with Lookup.
type Aggregator struct {
	name   string
	interp Interpolation
	kind   kind
	pct    float64 // percentile in (0, 100] for kPercentile
	est    Estimation
}

// Name returns the name the aggregator is registered under.
func (a *Aggregator) Name() string { return a.name }

// String returns the registered name.
func (a *Aggregator) String() string { return a.name }

// Interpolation returns how the group-by fills a missing point.
func (a *Aggregator) Interpolation() Interpolation { return a.interp }

// IsNone reports whether this is "none": no group-by, every series is
// returned on its own, and it may not be used to downsample.
func (a *Aggregator) IsNone() bool { return a.kind == kNone }

// Percentile returns the percentile (0, 100] and estimator of a percentile
// aggregator; ok is false for the others.
func (a *Aggregator) Percentile() (p float64, e Estimation, ok bool) {
	return a.pct, a.est, a.kind == kPercentile
}

// registry maps OpenTSDB 2.4's names (Aggregators.java, plus diff and
// squareSum of 2.4.0) to aggregators. Names are case-sensitive.
var registry = buildRegistry()

func buildRegistry() map[string]*Aggregator {
	m := map[string]*Aggregator{}
	add := func(name string, interp Interpolation, k kind) {
		m[name] = &Aggregator{name: name, interp: interp, kind: k}
	}
	add("sum", Lerp, kSum)
	add("zimsum", ZIM, kSum)
	add("pfsum", Prev, kSum)
	add("min", Lerp, kMin)
	add("max", Lerp, kMax)
	add("mimmin", Max, kMin)
	add("mimmax", Min, kMax)
	add("avg", Lerp, kAvg)
	add("dev", Lerp, kDev)
	add("median", Lerp, kMedian)
	add("mult", Lerp, kMult)
	add("diff", Lerp, kDiff)
	add("count", ZIM, kCount)
	add("first", ZIM, kFirst)
	add("last", ZIM, kLast)
	add("squareSum", ZIM, kSquareSum)
	add("none", ZIM, kNone)
	addPercentiles(m)
	return m
}

// addPercentiles registers p50..p999 and their ep*r3/ep*r7 variants.
func addPercentiles(m map[string]*Aggregator) {
	pcts := []struct {
		suffix string
		p      float64
	}{{"50", 50}, {"75", 75}, {"90", 90}, {"95", 95}, {"99", 99}, {"999", 99.9}}
	for _, pc := range pcts {
		for _, v := range []struct {
			name string
			est  Estimation
		}{{"p" + pc.suffix, Legacy}, {"ep" + pc.suffix + "r3", R3}, {"ep" + pc.suffix + "r7", R7}} {
			m[v.name] = &Aggregator{name: v.name, interp: Lerp, kind: kPercentile, pct: pc.p, est: v.est}
		}
	}
}

// Lookup returns the aggregator registered under name (case-sensitive, as
// OpenTSDB's HashMap lookup).
func Lookup(name string) (*Aggregator, bool) {
	a, ok := registry[name]
	return a, ok
}

// Names returns every registered name in byte order, the body of
// /api/aggregators.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
