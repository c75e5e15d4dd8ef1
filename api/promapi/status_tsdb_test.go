package promapi

import (
	"strings"
	"testing"
)

// TestLabelCountsFill: the four lists and numLabelPairs as Prometheus's
// MemPostings.Stats computes them (tsdb/index/postings.go), with the
// stringlabels size of a pair (labels.SizeOfLabels: each string's bytes
// plus one length byte, four from 255 bytes on) times its series, largest
// first, ties by name, cut at limit.
func TestLabelCountsFill(t *testing.T) {
	c := LabelCounts{}
	long := strings.Repeat("v", 300)
	for _, s := range [][]string{
		{"__name__", "up", "job", "a"},
		{"__name__", "up", "job", "b"},
		{"__name__", "go", "job", "a"},
		{"__name__", "x", "job", long},
	} {
		for i := 0; i < len(s); i += 2 {
			c.Add(s[i], s[i+1])
		}
	}
	var st TSDBStatus
	c.Fill(&st, 2)
	if st.NumLabelPairs != 6 {
		t.Errorf("NumLabelPairs = %d, want 6 (up, go, x; a, b, long)", st.NumLabelPairs)
	}
	for _, l := range []struct {
		name string
		got  []TSDBStat
		want []TSDBStat
	}{
		{"seriesCountByMetricName", st.SeriesCountByMetricName, []TSDBStat{{"up", 2}, {"go", 1}}},
		{"labelValueCountByLabelName", st.LabelValueCountByLabelName, []TSDBStat{{"__name__", 3}, {"job", 3}}},
		// job: a (4+2)*2, b (4+2)*1, long (4+304)*1; __name__: up (9+3)*2,
		// go (9+3)*1, x (9+2)*1.
		{"memoryInBytesByLabelName", st.MemoryInBytesByLabelName, []TSDBStat{{"job", 12 + 6 + 308}, {"__name__", 24 + 12 + 11}}},
		{"seriesCountByLabelValuePair", st.SeriesCountByLabelValuePair, []TSDBStat{{"__name__=up", 2}, {"job=a", 2}}},
	} {
		if len(l.got) != len(l.want) {
			t.Errorf("%s = %v, want %v", l.name, l.got, l.want)
			continue
		}
		for i := range l.got {
			if l.got[i] != l.want[i] {
				t.Errorf("%s = %v, want %v", l.name, l.got, l.want)
				break
			}
		}
	}
}
