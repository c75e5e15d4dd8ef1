package rollup

import "testing"

func mustInterval(t testing.TB, interval, span string) *Interval {
	t.Helper()
	c, err := ParseConfig([]byte(`{"aggregationIds":{"sum":0,"count":1,"min":2,"max":3},"intervals":[{"table":"t","preAggregationTable":"p","interval":"` + interval + `","rowSpan":"` + span + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return &c.Intervals[0]
}

// TestBaseTime takes OpenTSDB's TestRollupUtils cases (seconds; the
// millisecond ones snap the same).
func TestBaseTime(t *testing.T) {
	for _, tc := range []struct {
		interval, span string
		ts, want       int64
	}{
		{"1s", "1h", 1370530800, 1370530800},
		{"1s", "1h", 1370532925, 1370530800},
		{"1s", "1h", 1370534399, 1370530800},
		{"10m", "6h", 1370520000, 1370520000},
		{"10m", "6h", 1370530800, 1370520000},
		{"10m", "6h", 1370541599, 1370520000},
		{"10m", "2h", 1370523660, 1370520000},
		{"10m", "2h", 1370527199, 1370520000},
		{"10m", "1d", 1370476800, 1370476800},
		{"10m", "1d", 1370532925, 1370476800},
		{"10m", "1d", 1370563199, 1370476800},
		{"1h", "1n", 1370044800, 1370044800},
		{"1h", "1n", 1370532925, 1370044800},
		{"1h", "1n", 1372636799, 1370044800}, // end of June (30 days)
		{"1h", "1n", 1375315199, 1372636800}, // end of July (31 days)
		{"1h", "1n", 1362095999, 1359676800}, // end of February 2013
		{"1h", "1n", 1330559999, 1328054400}, // end of February 2012 (leap)
		{"1h", "1n", 1435708800, 1435708800}, // after the June 2015 leap second
		{"1d", "1y", 1356998400, 1356998400},
		{"1d", "1y", 1370532925, 1356998400},
		{"1d", "1y", 1388534399, 1356998400},
		{"1s", "1h", 0, 0},
		{"1h", "1d", 0, 0},
		{"1h", "1n", 0, 0},
	} {
		iv := mustInterval(t, tc.interval, tc.span)
		if got := iv.BaseTime(tc.ts); got != tc.want {
			t.Errorf("%s/%s BaseTime(%d) = %d, want %d", tc.interval, tc.span, tc.ts, got, tc.want)
		}
		if base, _ := iv.CellOf(tc.ts*1000 + 154); base != tc.want {
			t.Errorf("%s/%s CellOf(%d.154) base %d, want %d", tc.interval, tc.span, tc.ts, base, tc.want)
		}
	}
}

func TestNextBaseAndIndex(t *testing.T) {
	month := mustInterval(t, "1d", "1n")
	// February 2012 has 29 days.
	if got := month.NextBase(1328054400); got != 1330560000 {
		t.Errorf("NextBase(Feb 2012) = %d", got)
	}
	base, idx := month.CellOf(1330559999 * 1000)
	if base != 1328054400 || idx != 28 || month.CellStart(base, idx) != 1330473600000 {
		t.Errorf("CellOf(last second of Feb 2012) = %d %d", base, idx)
	}
	day := mustInterval(t, "1h", "1d")
	if base, idx := day.CellOf(1370532925154); base != 1370476800 || idx != 15 {
		t.Errorf("CellOf = %d %d", base, idx)
	}
	if day.NextBase(1370476800) != 1370563200 {
		t.Error("NextBase of a day")
	}
	year := mustInterval(t, "1d", "1y")
	if year.NextBase(1356998400) != 1388534400 {
		t.Error("NextBase of a year")
	}
	two := mustInterval(t, "10m", "2h")
	if two.NextBase(1370520000) != 1370527200 {
		t.Error("NextBase of 2h")
	}
}
