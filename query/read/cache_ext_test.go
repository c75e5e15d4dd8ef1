package read

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/series"
)

// TestRowExtremes: a cached Int row's block extremes give, for any span
// of any suffix, the smallest and largest value the points hold; a row
// with a float point, or too short to be worth them, has none.
func TestRowExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		pts := make([]series.Point, rng.IntN(300))
		for i := range pts {
			pts[i] = series.IntPoint(int64(i)*1000, rng.Int64N(2001)-1000)
		}
		e := &cacheEntry{pts: pts, ext: rowExtremes(pts)}
		if (e.ext == nil) != (len(pts) < 2*extBlock) {
			t.Fatalf("%d points: extremes %v", len(pts), e.ext != nil)
		}
		if len(pts) == 0 {
			continue
		}
		n := 1 + rng.IntN(len(pts))
		suffix := pts[len(pts)-n:]
		k := 1 + rng.IntN(n)
		lo, hi, ok := e.extremes(suffix, k)
		if ok != (e.ext != nil) {
			t.Fatalf("ok %v with extremes %v", ok, e.ext != nil)
		}
		if !ok {
			continue
		}
		wlo, whi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, p := range suffix[:k] {
			wlo, whi = min(wlo, p.Int()), max(whi, p.Int())
		}
		if lo != wlo || hi != whi {
			t.Fatalf("span [%d, %d) of %d: got %d..%d, want %d..%d", len(pts)-n, len(pts)-n+k, len(pts), lo, hi, wlo, whi)
		}
		if _, _, ok := e.extremes(append([]series.Point(nil), suffix...), k); ok {
			t.Fatal("a copy of the suffix was taken for the row's own points")
		}
	}
	pts := make([]series.Point, 100)
	for i := range pts {
		pts[i] = series.IntPoint(int64(i), 1)
	}
	pts[77] = series.Float64Point(77, 0.5)
	if rowExtremes(pts) != nil {
		t.Fatal("a row with a float point has extremes")
	}
}
