package agg

import (
	"errors"
	"testing"
	"time"
	_ "time/tzdata" // the zone tests run on machines without a zone database
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]int64{
		"1ms": 1, "250ms": 250, "1s": 1000, "90s": 90000, "5m": 300000, "2h": 7200000, "1d": 86400000,
		"1w": 604800000, "1n": 2592000000, "1y": 31536000000, "1H": 3600000, "3D": 259200000,
		"1fooh": 3600000, // OpenTSDB reads the digits and the last character only
		"5Ms":   5000,    // "ms" needs a lower-case m
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"":                      "Invalid duration, must have an integer and unit: ",
		"15":                    "Invalid duration, must have an integer and unit: 15",
		"h":                     "Invalid duration (number): h",
		"-1h":                   "Invalid duration (number): -1h",
		"0m":                    "Zero or negative duration: 0m",
		"1x":                    "Invalid duration (suffix): 1x",
		"99999999999999999999s": "Invalid duration (number): 99999999999999999999s",
		"9999999999999999y":     "Duration must be < Long.MAX_VALUE ms: 9999999999999999y",
	} {
		_, err := ParseDuration(in)
		if err == nil || err.Error() != msg || !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseDuration(%q) error %v, want %q", in, err, msg)
		}
	}
}

func TestParseDownsample(t *testing.T) {
	for _, tc := range []struct {
		in       string
		interval int64
		agg      string
		fill     FillPolicy
		all, cal bool
		n        int
		unit     CalendarUnit
	}{
		{in: "1m-avg", interval: 60000, agg: "avg", n: 1, unit: Minute},
		{in: "30m-avg-nan", interval: 1800000, agg: "avg", fill: FillNaN, n: 30, unit: Minute},
		{in: "24h-max-zero", interval: 86400000, agg: "max", fill: FillZero, n: 24, unit: Hour},
		{in: "1h-sum-NULL", interval: 3600000, agg: "sum", fill: FillNull, n: 1, unit: Hour},
		{in: "10s-count-scalar", interval: 10000, agg: "count", fill: FillScalar, n: 10, unit: Second},
		{in: "1m-avg-none", interval: 60000, agg: "avg", n: 1, unit: Minute},
		{in: "1m-avg-", interval: 60000, agg: "avg", n: 1, unit: Minute}, // Java split drops the empty tail
		{in: "1dc-sum", interval: 86400000, agg: "sum", cal: true, n: 1, unit: Day},
		{in: "500msc-p99", interval: 500, agg: "p99", cal: true, n: 500, unit: Millisecond},
		{in: "2wc-dev", interval: 1209600000, agg: "dev", cal: true, n: 2, unit: Week},
		{in: "1nc-first", interval: 2592000000, agg: "first", cal: true, n: 1, unit: Month},
		{in: "0all-sum", agg: "sum", all: true},
		{in: "1all-max-nan", agg: "max", all: true, fill: FillNaN},
	} {
		d, err := ParseDownsample(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if d.Interval != tc.interval || d.Agg.Name() != tc.agg || d.Fill != tc.fill || d.All != tc.all ||
			d.Calendar != tc.cal || (!tc.all && (d.CalendarN != tc.n || d.CalendarUnit != tc.unit)) {
			t.Errorf("%q parsed to %+v", tc.in, d)
		}
		again, err := ParseDownsample(d.String())
		if err != nil || again.String() != d.String() || again.Interval != d.Interval || again.Calendar != d.Calendar {
			t.Errorf("%q: String %q does not parse back: %+v %v", tc.in, d.String(), again, err)
		}
	}
	for in, msg := range map[string]string{
		"":              "Invalid downsampling specifier '': must provide at least interval and function",
		"1m":            "Invalid downsampling specifier '1m': must provide at least interval and function",
		"1m-avg-nan-x":  "Invalid downsampling specifier '1m-avg-nan-x': must consist of interval, function, and optional fill policy",
		"1m-hurp":       "No such downsampling function: hurp",
		"1m-none":       "cannot use the NONE aggregator for downsampling",
		"10m-avg-max":   "Unrecognized fill policy: max",
		"1j-avg":        "Invalid duration (suffix): 1j",
		"1-avg":         "Invalid duration, must have an integer and unit: 1",
		"1fooh-avg":     "", // accepted: not calendar
		"1fooHc-avg":    "Invalid downsampling specifier '1fooHc-avg': For input string: \"1foo\"",
		"1m--avg":       "No such downsampling function: ",
		"c-avg":         "Invalid duration, must have an integer and unit: ",
		"-avg":          "Invalid duration, must have an integer and unit: ",
		"60000000000y-": "Invalid downsampling specifier '60000000000y-': must provide at least interval and function",
	} {
		_, err := ParseDownsample(in)
		switch {
		case msg == "" && err != nil:
			t.Errorf("%q: %v", in, err)
		case msg != "" && (err == nil || err.Error() != msg || !errors.Is(err, ErrInvalid)):
			t.Errorf("%q: error %v, want %q", in, err, msg)
		}
	}
}

func TestSetCalendar(t *testing.T) {
	d, _ := ParseDownsample("6h-avg")
	if err := d.SetCalendar(); err != nil || !d.Calendar || d.CalendarN != 6 || d.CalendarUnit != Hour {
		t.Errorf("6h-avg with calendar: %+v %v", d, err)
	}
	if d.String() != "6hc-avg" {
		t.Errorf("String %q", d.String())
	}
	d, _ = ParseDownsample("1fooh-avg")
	if err := d.SetCalendar(); err == nil {
		t.Error("1fooh cannot be calendar units")
	}
}

// TestCalFloor checks DateTime.previousInterval's alignment with dates
// worked out on a calendar.
func TestCalFloor(t *testing.T) {
	denver, err := time.LoadLocation("America/Denver")
	if err != nil {
		t.Fatal(err) // time/tzdata is linked in: never missing
	}
	utc := time.UTC
	ts := func(loc *time.Location, y int, mo time.Month, d, h, m, s int) int64 {
		return time.Date(y, mo, d, h, m, s, 0, loc).UnixMilli()
	}
	at := ts(utc, 2024, time.June, 19, 14, 37, 45) // a Wednesday
	for _, tc := range []struct {
		n    int
		u    CalendarUnit
		loc  *time.Location
		want int64
	}{
		{15, Second, utc, ts(utc, 2024, time.June, 19, 14, 37, 45)},
		{7, Second, utc, ts(utc, 2024, time.June, 19, 14, 37, 41)}, // from the top of the hour: 2265 s = 323*7+4
		{15, Minute, utc, ts(utc, 2024, time.June, 19, 14, 30, 0)},
		{7, Minute, utc, ts(utc, 2024, time.June, 19, 14, 35, 0)}, // from midnight: 877 min = 125*7+2
		{6, Hour, utc, ts(utc, 2024, time.June, 19, 12, 0, 0)},
		{5, Hour, utc, ts(utc, 2024, time.June, 19, 13, 0, 0)}, // from June 1st: 446 h = 89*5+1
		{1, Day, utc, ts(utc, 2024, time.June, 19, 0, 0, 0)},
		{1, Day, denver, ts(denver, 2024, time.June, 19, 0, 0, 0)}, // 08:37 local
		{2, Day, utc, ts(utc, 2024, time.June, 19, 0, 0, 0)},       // 170 days after Jan 1st = 2*85
		{1, Week, utc, ts(utc, 2024, time.June, 16, 0, 0, 0)},      // the Sunday before
		{3, Week, utc, ts(utc, 2024, time.June, 16, 0, 0, 0)},
		{1, Month, utc, ts(utc, 2024, time.June, 1, 0, 0, 0)},
		{5, Month, utc, ts(utc, 2024, time.June, 1, 0, 0, 0)}, // Jan + 5
		{4, Month, utc, ts(utc, 2024, time.May, 1, 0, 0, 0)},  // Jan + 4
		{1, Year, utc, ts(utc, 2024, time.January, 1, 0, 0, 0)},
		{1, Year, denver, ts(denver, 2024, time.January, 1, 0, 0, 0)},
		{250, Millisecond, utc, at},
	} {
		if got := calFloor(at, tc.n, tc.u, tc.loc).UnixMilli(); got != tc.want {
			t.Errorf("%d%s in %v: %v, want %v", tc.n, tc.u.suffix(), tc.loc,
				time.UnixMilli(got).In(tc.loc), time.UnixMilli(tc.want).In(tc.loc))
		}
	}
}

func TestScanRange(t *testing.T) {
	h := int64(3600000)
	base := int64(1700000000000) / h * h // an hour boundary
	min5, _ := ParseDownsample("5m-avg")
	odd, _ := ParseDownsample("7m-avg")
	all, _ := ParseDownsample("0all-sum")
	for _, tc := range []struct {
		qs, qe     int64
		ds         *Downsample
		start, end int64
	}{
		// 00:30:15 .. 01:45:00: start down to the hour; end + 1 s, up to the next hour.
		{base + 1815000, base + h + 2700000, nil, base, base + 2*h},
		// An end exactly on the hour still moves to the next one.
		{base, base + h, nil, base, base + 2*h},
		{base + 1815000, base + h + 2700000, &min5, base, base + 2*h},
		{base + 1815000, base + h + 2700000, &all, base, base + 2*h},
		// 7 minutes: base is 60 s past a 420 s boundary, so the start drops
		// to the previous hour; the end (base+3600 s, 300 s past a boundary)
		// moves up 120 s and then to the hour after.
		{base, base + h - 1000, &odd, base - h, base + 2*h},
	} {
		s, e := ScanRange(tc.qs, tc.qe, tc.ds)
		if s != tc.start || e != tc.end {
			t.Errorf("ScanRange(%d, %d, %v) = %d, %d; want %d, %d", tc.qs-base, tc.qe-base, tc.ds, s-base, e-base, tc.start-base, tc.end-base)
		}
	}
}
