package jsonw

import (
	"strconv"
	"testing"
)

// TestStamps: Stamps writes what strconv.AppendInt writes, for values
// sharing their high digits with the one before and not, small,
// negative, and across a change of length.
func TestStamps(t *testing.T) {
	var s Stamps
	var got []byte
	for _, v := range []int64{1370476800, 1370480400, 1370480401, 1370489999, 1370490000, 1370999999, 1371000000, 9999, 999999,
		1000000, 10000, 0, -1, -1370476800, 99999999, 100000000, 1370476800123, 1370476800123, 9223372036854775807, -9223372036854775808} {
		got = s.Append(got[:0], v)
		if want := strconv.FormatInt(v, 10); string(got) != want {
			t.Errorf("%d: %q, want %q", v, got, want)
		}
	}
}

// BenchmarkStamps: an hour's step over a month of second timestamps,
// against strconv.AppendInt.
func BenchmarkStamps(b *testing.B) {
	dst := make([]byte, 0, 32)
	b.Run("stamps", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			var s Stamps
			for k := range int64(720) {
				dst = s.Append(dst[:0], 1370476800+k*3600)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for k := range int64(720) {
				dst = strconv.AppendInt(dst[:0], 1370476800+k*3600, 10)
			}
		}
	})
	sink = dst
}
