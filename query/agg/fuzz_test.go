package agg

import (
	"errors"
	"testing"
)

// FuzzParseDownsample checks that no specifier panics, every refusal is
// ErrInvalid, and an accepted one prints (String) to a specifier that
// parses to the same downsampler.
func FuzzParseDownsample(f *testing.F) {
	for _, s := range []string{"1m-avg", "30m-avg-nan", "24h-max-zero", "1dc-sum", "500msc-p99", "0all-sum",
		"1all-max-nan", "2wc-dev", "1nc-first-null", "10s-count-scalar", "1m", "-avg", "1m--avg", "c-avg",
		"1fooHc-avg", "9999999999999999y-sum", "1m-none", "1m-avg-bogus", "1m-avg-nan-x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDownsample(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseDownsample(%q): error %v is not ErrInvalid", s, err)
			}
			return
		}
		if !d.All && d.Interval <= 0 {
			t.Fatalf("ParseDownsample(%q): interval %d", s, d.Interval)
		}
		again, err := ParseDownsample(d.String())
		if err != nil || !sameDownsample(again, d) {
			t.Fatalf("ParseDownsample(%q) = %+v\nprinted %q\nparsed back %+v, %v", s, d, d.String(), again, err)
		}
	})
}

// FuzzParseDuration checks that durations never panic and are positive.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1ms", "5m", "1h", "1d", "1w", "1n", "1y", "", "15", "h", "0m", "1x",
		"99999999999999999999s", "9999999999999999y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseDuration(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseDuration(%q): %v", s, err)
			}
			return
		}
		if ms <= 0 {
			t.Fatalf("ParseDuration(%q) = %d", s, ms)
		}
	})
}

// sameDownsample compares two parsed downsamplers; of the cached calendar
// errors (whose messages quote the whole specifier) only presence counts.
func sameDownsample(a, b Downsample) bool {
	ea, eb := a.calErr, b.calErr
	a.calErr, b.calErr = nil, nil
	return a == b && (ea == nil) == (eb == nil)
}
