package read_test

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
)

// TestLast: the newest point of a range comes from the store (hours found
// by walking down), from the head, or from a flushed row newer than the
// head's out-of-order point; an empty range has none.
func TestLast(t *testing.T) {
	ctx := context.Background()
	s := openStack(t)
	const h0 = int64(1_700_000_000_000) - 1_700_000_000_000%3_600_000
	const hr = int64(3_600_000)
	// web01: hours 0..2 flushed, nothing later.
	for i := range int64(3) {
		s.put(t, "m", "web01", series.IntPoint(h0+i*hr+1000, 10+i))
		s.put(t, "m", "web01", series.IntPoint(h0+i*hr+2000, 20+i))
	}
	// web02: hour 1 flushed; later an out-of-order point into hour 0 stays
	// in the head while hour 1 holds the newest point.
	s.put(t, "m", "web02", series.Float64Point(h0+hr+5000, 2.5))
	s.flushAll(t)
	s.put(t, "m", "web02", series.Float64Point(h0+7000, 9.5))
	// web03: only in the head.
	s.put(t, "m", "web03", series.IntPoint(h0+4*hr+3000, 42))
	r := s.reader(t, read.Options{})
	byHost := map[string]int{}
	sel := s.selection(t, "m")
	for i, x := range sel {
		byHost[hostOf(t, s, x)] = i
	}
	for _, tc := range []struct {
		host       string
		start, end int64
		want       series.Point
		ok         bool
	}{
		{"web01", h0, h0 + 10*hr, series.IntPoint(h0+2*hr+2000, 22), true},
		{"web01", h0, h0 + 2*hr + 1500, series.IntPoint(h0+2*hr+1000, 12), true},
		{"web01", h0, h0 + hr + 1999, series.IntPoint(h0+hr+1000, 11), true},
		{"web01", h0 + 3*hr, h0 + 10*hr, series.Point{}, false},
		{"web02", h0, h0 + 10*hr, series.Float64Point(h0+hr+5000, 2.5), true},
		{"web02", h0, h0 + hr, series.Float64Point(h0+7000, 9.5), true},
		{"web03", h0, h0 + 10*hr, series.IntPoint(h0+4*hr+3000, 42), true},
		{"web03", h0, h0 + 4*hr, series.Point{}, false},
	} {
		got, ok, err := r.Last(ctx, sel[byHost[tc.host]], tc.start, tc.end)
		if err != nil || ok != tc.ok || got != tc.want {
			t.Errorf("%s [%d, %d]: %v %v %v, want %v %v", tc.host, tc.start-h0, tc.end-h0, got, ok, err, tc.want, tc.ok)
		}
	}
}
