package read_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// benchData loads hosts series of metric "m", a point every 10 s over
// hours hours from t0, in one commit per series; with flush they go to
// the store, else they stay in the head (as after a bulk load).
func benchData(b *testing.B, hosts int, hours int64, flush bool) (*stack, []index.Series) {
	b.Helper()
	s := openStack(b)
	ctx := context.Background()
	for h := range hosts {
		tags := []uid.Tag{{Key: []byte("host"), Value: fmt.Appendf(nil, "h%03d", h)}}
		for ts := t0; ts < t0+hours*hourMs; ts += 10_000 {
			if _, err := s.app.Append(ctx, []byte("m"), tags, series.IntPoint(ts, (ts/10_000+int64(h))%100)); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.app.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	if flush {
		s.flushAll(b)
	}
	return s, s.selection(b, "m")
}

// nopVisitor counts the points a Visit gives.
type nopVisitor struct{ n atomic.Int64 }

func (v *nopVisitor) Points(_ int, pts []series.Point) error { v.n.Add(int64(len(pts))); return nil }
func (v *nopVisitor) Notes(int, []read.Note)                 {}

// benchSet is a dataset of benchData.
type benchSet struct {
	name  string
	hosts int
	hours int64
	flush bool
}

var benchSets = []benchSet{{"store", 100, 6, true}, {"head", 100, 6, false}, {"one", 1, 1, true}}

// BenchmarkSurfaces reads every point of a selection through each read
// surface and plan, warm (the row cache holds the rows after the first
// read), from rows in the store and rows still in the head, over 100
// series for 6 hours (216,000 points) and one series for one hour (the
// per-call costs).
func BenchmarkSurfaces(b *testing.B) {
	for _, data := range benchSets {
		b.Run(data.name, func(b *testing.B) {
			s, sel := benchData(b, data.hosts, data.hours, data.flush)
			r := s.reader(b, read.Options{})
			want := data.hosts * int(data.hours) * 360
			rg := [2]int64{t0, t0 + data.hours*hourMs - 1}
			for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
				rsel := read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: plan}
				b.Run("read/"+plan.String(), func(b *testing.B) {
					benchSurface(b, want, func() int {
						n := 0
						err := r.Read(context.Background(), rsel, func(_ index.Series, pts []series.Point, _ []read.Note) error {
							n += len(pts)
							return nil
						})
						mustNil(b, err)
						return n
					})
				})
				b.Run("visit/"+plan.String(), func(b *testing.B) {
					benchSurface(b, want, func() int {
						v := &nopVisitor{}
						mustNil(b, r.Visit(context.Background(), rsel, v))
						return int(v.n.Load())
					})
				})
				b.Run("fetch/"+plan.String(), func(b *testing.B) {
					var it *read.SeriesIterator
					benchSurface(b, want, func() int {
						f, err := r.Fetch(context.Background(), rsel)
						mustNil(b, err)
						n := 0
						for i := range f.Len() {
							it = f.Iterator(context.Background(), i, it)
							for pts, ok := it.NextBatch(rg[0]); ok; pts, ok = it.NextBatch(rg[0]) {
								n += len(pts)
							}
							mustNil(b, it.Err())
						}
						f.Release()
						return n
					})
				})
			}
			b.Run("iterator", func(b *testing.B) {
				benchSurface(b, want, func() int {
					n := 0
					for _, x := range sel {
						it := r.Iterator(context.Background(), x, rg[0], rg[1], nil)
						for it.Next() {
							n++
						}
						mustNil(b, it.Err())
						it.Close()
					}
					return n
				})
			})
			b.Run("last", func(b *testing.B) {
				benchSurface(b, len(sel), func() int {
					n := 0
					for _, x := range sel {
						_, ok, err := r.Last(context.Background(), x, rg[0], rg[1])
						mustNil(b, err)
						if ok {
							n++
						}
					}
					return n
				})
			})
		})
	}
}

// benchSurface runs read, which returns the points it read (want).
func benchSurface(b *testing.B, want int, read func() int) {
	if n := read(); n != want { // and warms the row cache
		b.Fatalf("read %d points, want %d", n, want)
	}
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		read()
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
}

func mustNil(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRowWalk walks the last eight of 24 hours of 80 series a row
// at a time, as a pushed-down max_over_time over hourly windows does
// (PromQL's max-all-8 of bench/queryset), with Options.Changes as in a
// daemon: the per-row costs of finding each row (the series' record, the
// trust index, the row cache, the head), from rows in the store and rows
// still in the head.
func BenchmarkRowWalk(b *testing.B) {
	for _, flush := range []bool{true, false} {
		name := map[bool]string{true: "store", false: "head"}[flush]
		b.Run(name, func(b *testing.B) {
			s, sel := benchData(b, 80, 24, flush)
			r := s.reader(b, read.Options{Changes: s.changes})
			rg := [2]int64{t0 + 16*hourMs, t0 + 24*hourMs - 1}
			walk := func() int {
				n := 0
				for _, x := range sel {
					it := r.Iterator(context.Background(), x, rg[0], rg[1], nil)
					for pts, ok := it.NextBatch(rg[0]); ok; pts, ok = it.NextBatch(rg[0]) {
						n += len(pts)
					}
					if err := it.Err(); err != nil { // not mustNil: Helper walks the stack
						b.Fatal(err)
					}
					it.Close()
				}
				return n
			}
			walk() // cached, then trusted: the steady state of a dashboard
			walk()
			benchSurface(b, 80*8*360, walk)
		})
	}
}
