package parse

import (
	"errors"
	"math"
	"testing"

	"github.com/tsd-db/tsd/series"
)

func TestParseLongMessages(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "Empty string"},
		{"-", "Just a sign, no value: -"},
		{"12345678901234567890", "Value too long: 12345678901234567890"},
		{"+123456789012345678901", "Value too long: +123456789012345678901"},
		{"12x", "Invalid character 'x' in 12x"},
		{"notatime", "Invalid character 'n' in notatime"},
		{"1é", "Invalid character 'é' in 1é"},
		{"9223372036854775808", "Overflow in 9223372036854775808"},
		{"-9223372036854775809", "Overflow in -9223372036854775809"},
	} {
		_, err := ParseLong([]byte(tc.in))
		var nf *NumberFormatError
		if !errors.As(err, &nf) || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.in, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want int64
	}{{"+5", 5}, {"-9223372036854775808", math.MinInt64}, {"0", 0}} {
		if v, err := ParseLong([]byte(tc.in)); err != nil || v != tc.want {
			t.Errorf("%q: %d %v", tc.in, v, err)
		}
	}
}

func TestParseOpenTSDBValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want series.Point
	}{
		{"42", series.IntPoint(0, 42)},
		{"-7", series.IntPoint(0, -7)},
		{"42.5", series.Float32Point(0, 42.5)},
		{"42.2", series.Float64Point(0, 42.2)},
		{"1.3E3", series.Float32Point(0, 1300)},
		{"97.487437", series.Float64Point(0, 97.487437)},
		{"1e+21", series.Float64Point(0, 1e21)},
		{"5e-07", series.Float64Point(0, 5e-07)},
		{"0.5", series.Float32Point(0, 0.5)},
		{"0x1.8p1", series.Float32Point(0, 3)},
	} {
		got, err := ParseOpenTSDBValue([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("%q: got %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"1.2.3", `For input string: "1.2.3"`},
		{"abc", "Invalid character 'a' in abc"},
		{"12345678901234567890", "Value too long: 12345678901234567890"},
		{"NaN", "Invalid character 'N' in NaN"},
		{"1e999", "value is NaN or Infinite"},
		{"-1e999", "value is NaN or Infinite"},
	} {
		_, err := ParseOpenTSDBValue([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.in, err, tc.want)
		}
	}
}

func TestOpenTSDBMillis(t *testing.T) {
	for _, tc := range []struct {
		ts, ms int64
		ok     bool
	}{
		{1356998400, 1356998400000, true},
		{4294967295, 4294967295000, true},
		{4294967296, 4294967296, true},
		{1356998400500, 1356998400500, true},
		{9999999999999, 9999999999999, true},
		{10000000000000, 10000000000000, false},
	} {
		ms, ok := OpenTSDBMillis(tc.ts)
		if ms != tc.ms || ok != tc.ok {
			t.Errorf("%d: got %d %v", tc.ts, ms, ok)
		}
	}
}

func TestAppendJavaValue(t *testing.T) {
	for _, tc := range []struct {
		v    series.Point
		want string
	}{
		{series.IntPoint(0, 42), "[42]/0"},
		{series.IntPoint(0, -1), "[-1]/0"},
		{series.IntPoint(0, 300), "[1, 44]/1"},
		{series.IntPoint(0, 1<<20), "[0, 16, 0, 0]/3"},
		{series.IntPoint(0, 1<<40), "[0, 0, 1, 0, 0, 0, 0, 0]/7"},
		{series.Float32Point(0, 42.5), "[66, 42, 0, 0]/11"},
		{series.Float64Point(0, 42.2), "[64, 69, 25, -103, -103, -103, -103, -102]/15"},
	} {
		if got := string(AppendJavaValue(nil, tc.v)); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.v, got, tc.want)
		}
	}
	if JavaDouble(math.Inf(1)) != "Infinity" || JavaDouble(math.Inf(-1)) != "-Infinity" || JavaDouble(math.NaN()) != "NaN" {
		t.Error("JavaDouble")
	}
}
