package read

import (
	"math"
	"testing"

	"github.com/tsd-db/tsd/series"
)

// TestRowIntSum checks when a cached row carries an exact integer sum and
// that a suffix's sum equals adding its points one by one.
func TestRowIntSum(t *testing.T) {
	ints := func(vs ...int64) []series.Point {
		pts := make([]series.Point, len(vs))
		for i, v := range vs {
			pts[i] = series.IntPoint(int64(i)*1000, v)
		}
		return pts
	}
	for _, tc := range []struct {
		name string
		pts  []series.Point
		ok   bool
	}{
		{"small ints", ints(5, -3, 7, 0, 9, -1), true},
		{"empty", nil, true},
		{"a float", append(ints(1, 2), series.Float64Point(5000, 1)), false},
		{"above 2^53", ints(1, exactInt+1), false},
		{"at 2^53, alone", ints(exactInt), true},
		{"n x max above 2^53", ints(exactInt/2, 1, 1), false},
		{"n x max at 2^53", ints(exactInt/2, -exactInt/2), true},
		{"min int64", ints(math.MinInt64, 0), false},
	} {
		got, _ := rowSummaries(tc.pts)
		if got.ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, got.ok, tc.ok)
			continue
		}
		if !got.ok {
			continue
		}
		e := &cacheEntry{pts: tc.pts, sum: got}
		for k := range tc.pts {
			suffix := tc.pts[k:]
			var want int64
			for _, p := range suffix {
				want += int64(p.Bits)
			}
			s, _, ok := e.suffixSum(suffix)
			if shortHalf := 2*len(suffix) < len(tc.pts); ok == shortHalf {
				t.Errorf("%s: suffix %d: ok %v", tc.name, k, ok)
			} else if ok && s != want {
				t.Errorf("%s: suffix %d: sum %d, want %d", tc.name, k, s, want)
			}
		}
		if len(tc.pts) > 1 {
			if _, _, ok := e.suffixSum(tc.pts[:len(tc.pts)-1]); ok {
				t.Errorf("%s: a prefix passed for a suffix", tc.name)
			}
			if _, _, ok := e.suffixSum(append([]series.Point(nil), tc.pts...)); ok {
				t.Errorf("%s: a copy passed for the cached slice", tc.name)
			}
		}
	}
}

// BenchmarkRowSummaries is what the row cache computes for each row it
// adopts: a stored hour of 360 integer points' sum and block extremes.
func BenchmarkRowSummaries(b *testing.B) {
	pts := make([]series.Point, 360)
	for i := range pts {
		pts[i] = series.IntPoint(int64(i)*10_000, int64(i*7%100+1))
	}
	b.ReportAllocs()
	for b.Loop() {
		if s, ext := rowSummaries(pts); !s.ok || ext == nil {
			b.Fatal("no summaries")
		}
	}
}
