package service

import (
	"strings"
	"testing"
)

// FuzzParseRollupSpec: any spec word gives an interval and aggregator
// only from a dash, a group-by aggregator only without a dash or after a
// colon, and never panics.
func FuzzParseRollupSpec(f *testing.F) {
	for _, s := range []string{"1h-sum", "sum", "1h-sum:max", "", ":", "-", "1h-:x", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, word string) {
		s := ParseRollupSpec([]byte(word))
		first, _, _ := strings.Cut(word, ":")
		if (s.Interval != nil) != strings.Contains(first, "-") {
			t.Fatalf("%q: %+v", word, s)
		}
		if s.IsGroupBy && s.Agg == nil {
			t.Fatalf("%q: a group-by spec without a temporal aggregator: %+v", word, s)
		}
	})
}

func TestParseRollupSpec(t *testing.T) {
	for _, tc := range []struct{ word, interval, agg, groupBy string }{
		{"1h-SUM", "1h", "SUM", ""},
		{"sum", "", "sum", "sum"},
		{"1h-sum:max", "1h", "sum", "max"},
		{"1h-sum:", "1h", "sum", ""},
	} {
		s := ParseRollupSpec([]byte(tc.word))
		if string(s.Interval) != tc.interval || string(s.Agg) != tc.agg || string(s.GroupBy) != tc.groupBy || s.IsGroupBy != (tc.groupBy != "") {
			t.Errorf("%q: %+v", tc.word, s)
		}
	}
}
