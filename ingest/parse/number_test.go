package parse

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestParseFloatMatchesStrconv(t *testing.T) {
	cases := []string{"0", "-0", "1", "1.", ".5", "-.5", "42.07", "97.487437", "1e+21", "5e-07",
		"1.3E3", "123456789012345678901234567890", "0.1", "9007199254740993", "1e22", "1e23",
		"4.9e-324", "1e-400", "1.7976931348623157e308", "2.2250738585072014e-308",
		"0.000000000000000000000000000001", "+3.25", "1e0", "00012.50"}
	for _, s := range cases {
		want, err := strconv.ParseFloat(s, 64)
		if err != nil && !math.IsInf(want, 0) && want != 0 {
			t.Fatalf("bad case %q", s)
		}
		got, ok := ParseFloat([]byte(s))
		if !ok || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%q: got %v (%v), want %v", s, got, ok, want)
		}
	}
	if f, ok := ParseFloat([]byte("1e999")); !ok || !math.IsInf(f, 1) {
		t.Errorf("1e999: %v %v", f, ok)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		for _, s := range []string{strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'f', 6, 64),
			strconv.FormatFloat(float64(r.IntN(1e6))/100, 'f', -1, 64)} {
			want, _ := strconv.ParseFloat(s, 64)
			if got, ok := ParseFloat([]byte(s)); !ok || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%q: got %v, want %v", s, got, want)
			}
		}
	}
}

func TestParseFloatRefuses(t *testing.T) {
	for _, s := range []string{"", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "inf", "NaN", "0x10", "1_000",
		" 1", "1 ", "1f", "--1", "1e5.5"} {
		if f, ok := ParseFloat([]byte(s)); ok {
			t.Errorf("%q accepted as %v", s, f)
		}
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		s  string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"+7", 7, true}, {"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false}, {"", 0, false}, {"-", 0, false}, {"1a", 0, false},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
	} {
		v, ok := ParseInt([]byte(tc.s))
		if v != tc.v || ok != tc.ok {
			t.Errorf("%q: got %d %v, want %d %v", tc.s, v, ok, tc.v, tc.ok)
		}
	}
	if u, ok := ParseUint([]byte("18446744073709551615")); !ok || u != math.MaxUint64 {
		t.Errorf("max uint: %d %v", u, ok)
	}
	if _, ok := ParseUint([]byte("18446744073709551616")); ok {
		t.Error("uint overflow accepted")
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"42.07", "1e+21", "-0", ".5", "123456789012345678901234", "1e-400", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseFloat([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil && !math.IsInf(want, 0) && want != 0 {
			t.Fatalf("%q accepted as %v, strconv refuses: %v", s, got, err)
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: got %v, strconv %v", s, got, want)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-9223372036854775808", "9223372036854775808", "+1", "1x", "9999999999999999999", "-999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseInt([]byte(s))
		want, err := strconv.ParseInt(s, 10, 64)
		if ok != (err == nil) || (ok && got != want) {
			t.Fatalf("%q: got %d %v, strconv %d %v", s, got, ok, want, err)
		}
	})
}
