package read

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/series"
)

// clipWalk is clip's definition, walked point by point.
func clipWalk(pts []series.Point, start, end int64) []series.Point {
	var out []series.Point
	for _, p := range pts {
		if p.T >= start && p.T <= end {
			out = append(out, p)
		}
	}
	return out
}

// TestClipMatchesWalk: the searched clip keeps exactly the points in
// [start, end], for sorted slices with repeated times, bounds on, between
// and beyond points, and the extreme int64 bounds.
func TestClipMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	bounds := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, math.MaxInt64 - 1, math.MaxInt64}
	for n := 0; n < 2000; n++ {
		pts := make([]series.Point, r.IntN(40))
		tm := int64(r.IntN(20)) - 10
		for i := range pts {
			tm += int64(r.IntN(3)) // repeats allowed
			pts[i] = series.Point{T: tm, Bits: uint64(i)}
		}
		pick := func() int64 {
			if r.IntN(8) == 0 {
				return bounds[r.IntN(len(bounds))]
			}
			return int64(r.IntN(120)) - 20
		}
		start, end := pick(), pick()
		got, want := clip(pts, start, end), clipWalk(pts, start, end)
		if len(got) != len(want) {
			t.Fatalf("clip(%v, %d, %d) = %v, want %v", pts, start, end, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("clip(%v, %d, %d) = %v, want %v", pts, start, end, got, want)
			}
		}
	}
}
