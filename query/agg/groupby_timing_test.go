package agg

import (
	"testing"
	"time"

	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/series"
)

var sinkPoint series.Point

// hosts returns n series of count points every step ms from t0; series k is
// shifted by k*shift ms, so shifted series interpolate at each other's
// timestamps.
func hosts(n, count int, t0, step, shift int64) [][]series.Point {
	ss := make([][]series.Point, n)
	for k := range ss {
		ss[k] = make([]series.Point, count)
		for j := range ss[k] {
			ss[k][j] = series.IntPoint(t0+int64(k)*shift+int64(j)*step, int64(k*1000+j%97))
		}
	}
	return ss
}

type benchInputs struct {
	its  []series.SliceIterator
	list []series.Iterator
}

func (b *benchInputs) reset(ss [][]series.Point) []series.Iterator {
	if b.its == nil {
		b.its = make([]series.SliceIterator, len(ss))
		b.list = make([]series.Iterator, len(ss))
	}
	for k := range ss {
		b.list[k] = series.NewSliceIterator(&b.its[k], ss[k])
	}
	return b.list[:len(ss)]
}

func benchGroup(b *testing.B, spec Spec, ss [][]series.Point) {
	var in benchInputs
	g := &GroupBy{}
	points := 0
	for _, s := range ss {
		points += len(s)
	}
	b.SetBytes(int64(points) * 16)
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		g = NewGroupBy(g, spec, in.reset(ss))
		for g.Next() {
			sinkPoint = g.At()
		}
	}
	reportCPU(b, cpu)
}

// reportCPU adds the CPU time per operation since cpu0, steadier than
// ns/op when the machine is shared.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

const hour = 3600 * 1000

// BenchmarkGroupBySumLerp merges 100 series x 360 points 10 s apart; in
// the jittered case every series is 7 ms later than the previous one, so
// the output has 36,000 timestamps with 99 interpolations each.
func BenchmarkGroupBySumLerp(b *testing.B) {
	spec := window(mustLookup(b, "sum"), 0, 2*hour)
	b.Run("aligned", func(b *testing.B) { benchGroup(b, spec, hosts(100, 360, 0, 10000, 0)) })
	b.Run("jittered", func(b *testing.B) { benchGroup(b, spec, hosts(100, 360, 0, 10000, 7)) })
}

// BenchmarkGroupByAvg1h is 100 hosts over 12 h at 10 s (4,320 points
// each), downsampled 1h-avg: merged into one avg group, and grouped by host
// (100 groups of one series, as "host=*").
func BenchmarkGroupByAvg1h(b *testing.B) {
	ss := hosts(100, 12*360, 0, 10000, 0)
	spec := window(mustLookup(b, "avg"), 0, 12*hour)
	spec.Downsample = ds(b, "1h-avg")
	b.Run("one-group", func(b *testing.B) { benchGroup(b, spec, ss) })
	b.Run("by-host", func(b *testing.B) {
		var in benchInputs
		g := &GroupBy{}
		b.SetBytes(100 * 12 * 360 * 16)
		b.ReportAllocs()
		cpu := cputime.Process()
		for b.Loop() {
			list := in.reset(ss)
			for k := range list {
				g = NewGroupBy(g, spec, list[k:k+1])
				for g.Next() {
					sinkPoint = g.At()
				}
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("1m-points", func(b *testing.B) { benchGroup(b, spec, hosts(100, 12*60, 0, 60000, 0)) })
}

// BenchmarkGroupByCells1h is the 1h-avg rollup query's group-by: 100
// series of 30 days of 1h cells (sum and count, as rollup rows give
// them) in Buckets, grouped by host (100 groups of one series).
func BenchmarkGroupByCells1h(b *testing.B) {
	const cells = 30 * 24
	spec := window(mustLookup(b, "avg"), 0, cells*hour)
	spec.Downsample = ds(b, "1h-avg")
	bks := make([]*Buckets, 100)
	for k := range bks {
		bks[k] = &Buckets{}
		bks[k].Reset(spec)
		for j := range int64(cells) {
			bks[k].PushCell(j*hour, 360, float64(20_000+int64(k)*j%997), 0, 0)
		}
		bks[k].Finish()
	}
	g := &GroupBy{}
	b.ReportAllocs()
	for b.Loop() {
		for k := range bks {
			g = NewGroupByBuckets(g, spec, bks[k:k+1])
			for g.Next() {
				sinkPoint = g.At()
			}
		}
	}
}

func TestGroupByReuseAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ss := hosts(10, 100, 0, 10000, 3)
	spec := window(mustLookup(t, "p90"), 0, hour)
	spec.Downsample = ds(t, "1m-p95")
	var in benchInputs
	g := &GroupBy{}
	run := func() {
		g = NewGroupBy(g, spec, in.reset(ss))
		for g.Next() {
			sinkPoint = g.At()
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations per reused run", n)
	}
}

// BenchmarkBaselineIterate only walks the Avg1h input (100 x 4,320 points)
// through series.Iterator and sums it: the floor any consumer of the
// iterators pays, to read the Avg1h figures against on a loaded machine.
func BenchmarkBaselineIterate(b *testing.B) {
	ss := hosts(100, 12*360, 0, 10000, 0)
	var in benchInputs
	b.SetBytes(100 * 12 * 360 * 16)
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		sum := 0.0
		for _, it := range in.reset(ss) {
			for it.Next() {
				sum += it.At().Float()
			}
		}
		sinkPoint.Bits = uint64(sum)
	}
	reportCPU(b, cpu)
}
