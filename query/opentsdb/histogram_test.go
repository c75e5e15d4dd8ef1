package opentsdb

import (
	"testing"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/rowkey/hist"
)

func histAt(t int64, n int64) histPoint {
	var h hist.Histogram
	h.Set(1, 2, n)
	return histPoint{t: t, h: h}
}

// TestDownsampleHist: HistogramDownsampler's buckets: fixed intervals
// aligned to t - t%interval, "all" stamped with the query start and
// keeping [start, end) only, calendar days from midnight; each bucket's
// histograms summed.
func TestDownsampleHist(t *testing.T) {
	pts := []histPoint{histAt(1_000, 1), histAt(59_000, 2), histAt(60_000, 4), histAt(86_400_000+5, 8)}
	for _, c := range []struct {
		spec string
		want [][2]int64 // bucket time, [1,2) count
	}{
		{"1m-sum", [][2]int64{{0, 3}, {60_000, 4}, {86_400_000, 8}}},
		{"0all-sum", [][2]int64{{1_000, 7}}}, // [1000, 86400000): the last is past the end
		{"1dc-sum", [][2]int64{{0, 7}, {86_400_000, 8}}},
	} {
		ds, err := agg.ParseDownsample(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		spec := agg.Spec{Downsample: &ds, QueryStart: 1_000, QueryEnd: 86_400_000}
		got := downsampleHist(pts, spec)
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d buckets, want %d", c.spec, len(got), len(c.want))
		}
		for i, w := range c.want {
			if got[i].t != w[0] || got[i].h.Count(1, 2) != w[1] {
				t.Errorf("%s: bucket %d = %d:%d, want %d:%d", c.spec, i, got[i].t, got[i].h.Count(1, 2), w[0], w[1])
			}
		}
	}
	if pts[0].h.Count(1, 2) != 1 {
		t.Error("downsampling changed its input")
	}
}
