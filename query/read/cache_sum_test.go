package read

import (
	"math"
	"testing"

	"github.com/tsd-db/tsd/series"
)

// TestRowIntSum checks when a cached row carries an exact integer sum and
// that the sum of any span of a suffix equals adding its points one by
// one, for rows too short for block sums and rows long enough.
func TestRowIntSum(t *testing.T) {
	ints := func(vs ...int64) []series.Point {
		pts := make([]series.Point, len(vs))
		for i, v := range vs {
			pts[i] = series.IntPoint(int64(i)*1000, v)
		}
		return pts
	}
	long := make([]int64, 3*blockPoints+5)
	for i := range long {
		long[i] = int64(i*i%97) - 40
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
		{"blocks", ints(long...), true},
		{"blocks, n x max above 2^53", ints(append(long[:len(long):len(long)], exactInt/64)...), false},
	} {
		got, blk := rowSummaries(tc.pts)
		if got.ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, got.ok, tc.ok)
			continue
		}
		e := &cacheEntry{pts: tc.pts, sum: got, blk: blk}
		for from := range tc.pts {
			suffix := tc.pts[from:]
			var want int64
			for k := 1; k <= len(suffix); k++ {
				want += int64(suffix[k-1].Bits)
				s, _, ok := e.spanSum(suffix, k)
				if ok != tc.ok {
					t.Fatalf("%s: [%d, %d): ok %v", tc.name, from, from+k, ok)
				} else if ok && s != want {
					t.Fatalf("%s: [%d, %d): sum %d, want %d", tc.name, from, from+k, s, want)
				}
			}
		}
		if len(tc.pts) > 1 {
			if _, _, ok := e.spanSum(tc.pts[:len(tc.pts)-1], 1); ok {
				t.Errorf("%s: a prefix passed for a suffix", tc.name)
			}
			if _, _, ok := e.spanSum(append([]series.Point(nil), tc.pts...), 1); ok {
				t.Errorf("%s: a copy passed for the cached slice", tc.name)
			}
			if _, _, ok := e.spanSum(tc.pts, 0); ok {
				t.Errorf("%s: an empty span passed", tc.name)
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
		if s, blk := rowSummaries(pts); !s.ok || blk == nil {
			b.Fatal("no summaries")
		}
	}
}

// BenchmarkSpanSum is a pushed-down sum's read of a cached row for a
// window that does not line up with it: a span of a stored hour of 360
// integer points from a random point to the row's end or a random one.
func BenchmarkSpanSum(b *testing.B) {
	pts := make([]series.Point, 360)
	for i := range pts {
		pts[i] = series.IntPoint(int64(i)*10_000, int64(i*7%100+1))
	}
	s, blk := rowSummaries(pts)
	e := &cacheEntry{pts: pts, sum: s, blk: blk}
	var spans [64][2]int
	for i := range spans {
		from := (i * 37) % 360
		spans[i] = [2]int{from, 1 + (i*53)%(360-from)}
	}
	b.ReportAllocs()
	var total int64
	for b.Loop() {
		for _, sp := range spans {
			sum, _, _ := e.spanSum(pts[sp[0]:], sp[1])
			total += sum
		}
	}
	if total == 0 {
		b.Fatal("no sums")
	}
}
