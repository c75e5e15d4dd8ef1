package jsonw

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestJavaForms: Double.toString's and Float.toString's layouts, and
// Jackson's quoted non-numbers.
func TestJavaForms(t *testing.T) {
	type form struct {
		f               float64
		double, jackson string
	}
	for _, c := range []form{
		{0, "0.0", "0.0"},
		{math.Copysign(0, -1), "-0.0", "-0.0"},
		{1, "1.0", "1.0"},
		{-2.5, "-2.5", "-2.5"},
		{1e-3, "0.001", "0.001"},
		{9.99e-4, "9.99E-4", "9.99E-4"},
		{1.5e-4, "1.5E-4", "1.5E-4"},
		{9999999.5, "9999999.5", "9999999.5"},
		{1e7, "1.0E7", "1.0E7"},
		{1.5e300, "1.5E300", "1.5E300"},
		{math.NaN(), "NaN", `"NaN"`},
		{math.Inf(1), "Infinity", `"Infinity"`},
		{math.Inf(-1), "-Infinity", `"-Infinity"`},
	} {
		if got := string(AppendJavaDouble(nil, c.f)); got != c.double {
			t.Errorf("AppendJavaDouble(%v) = %s, want %s", c.f, got, c.double)
		}
		if got := string(AppendJacksonDouble(nil, c.f)); got != c.jackson {
			t.Errorf("AppendJacksonDouble(%v) = %s, want %s", c.f, got, c.jackson)
		}
	}
	for f, want := range map[float32]string{3: "3.0", 0.1: "0.1", 1e7: "1.0E7", 99.9: "99.9", 1.0e-5: "1.0E-5"} {
		if got := string(AppendJavaFloat(nil, f)); got != want {
			t.Errorf("AppendJavaFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

// FuzzAppendJavaDouble checks that every finite double is written in
// Java's shape and reads back to the same bits.
func FuzzAppendJavaDouble(f *testing.F) {
	for _, v := range []float64{0, 1, -1, 0.5, 16, 1e7, 9999999.5, 1e-3, 9.99e-4, 1.5e300, 5e-324, math.MaxFloat64, 123456.789} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s := string(AppendJavaDouble(nil, v))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(v) && v != 0 {
			t.Fatalf("%v written %q reads back %v, %v", v, s, back, err)
		}
		mant, _, sci := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") || sci != (math.Abs(v) < 1e-3 && v != 0 || math.Abs(v) >= 1e7) {
			t.Fatalf("%v written %q, not Java's Double.toString shape", v, s)
		}
	})
}
