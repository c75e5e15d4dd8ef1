package promapi

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// FuzzParseTime: no panic, and a parsed time written back as decimal
// seconds (the response encoding) parses to the same millisecond, for
// times a float64 holds to the millisecond.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"4", "1700000000.123", "-1.5", "1e300", "NaN", "+Inf", "0x1p3",
		"2023-11-14T22:13:20.5Z", "2023-11-15T00:13:20+02:00", minTimeText, maxTimeText, "", "now"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTime(s)
		if err != nil {
			if !strings.Contains(err.Error(), "valid timestamp") {
				t.Fatalf("ParseTime(%q) error %q does not say what is wrong", s, err)
			}
			return
		}
		ms := msTime(tm)
		if ms > 1<<50 || ms < -1<<50 {
			return // beyond float64's exact milliseconds: no round trip to promise
		}
		back, err := ParseTime(string(appendTimestamp(nil, new(jsonw.Stamps), ms)))
		if err != nil || msTime(back) != ms {
			t.Fatalf("ParseTime(%q) = %d ms; written back: %v, %v", s, ms, back, err)
		}
	})
}

// FuzzParseDuration: no panic; a duration is finite and an error names
// the input.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"15", "0.5", "15s", "1m30s", "1h", "1d", "1y", "100ms", "1e19", "NaN", "-1", "", "5 min"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseDuration(s); err != nil && !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Fatalf("ParseDuration(%q) error %q does not name the input", s, err)
		}
	})
}

// FuzzParseRange: start, end and step either pass every check the
// engine relies on or fail with bad_data.
func FuzzParseRange(f *testing.F) {
	f.Add("0", "10", "1")
	f.Add("0", "11001", "1")
	f.Add("20", "10", "1s")
	f.Add("1700000000", "2023-11-14T22:13:20Z", "0.001")
	f.Add("-9e15", "9e15", "1e-9")
	f.Fuzz(func(t *testing.T, start, end, step string) {
		r, aerr := parseRange(start, end, step)
		if aerr != nil {
			if aerr.typ != errorBadData {
				t.Fatalf("parseRange(%q, %q, %q): %v is not bad_data", start, end, step, aerr)
			}
			return
		}
		if r.step <= 0 || r.end.Before(r.start) || r.end.Sub(r.start)/r.step > MaxPointsPerSeries {
			t.Fatalf("parseRange(%q, %q, %q) accepted %+v", start, end, step, r)
		}
	})
}

// FuzzParseMatchers: no panic, and an accepted set never matches
// everything.
func FuzzParseMatchers(f *testing.F) {
	for _, s := range []string{`up`, `{job="a"}`, `{job=""}`, `{__name__=~".*"}`, `up{`, `{"a.b"="c"}`, `x{y!~"z|"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sets, err := parseMatchers([]string{s})
		if err != nil {
			return
		}
		for _, set := range sets {
			if !hasNonEmptyMatcher(set) {
				t.Fatalf("parseMatchers(%q) accepted a set matching everything", s)
			}
		}
	})
}
