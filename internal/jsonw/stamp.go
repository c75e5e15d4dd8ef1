package jsonw

import "strconv"

// Stamps appends integers as strconv.AppendInt does, faster when one
// shares all but its last six digits with the one before, as the
// timestamps of a series' points do: those digits are copied from the
// last call's instead of formatted again. The zero value is ready; use
// one per sequence.
type Stamps struct {
	hi  int64 // the last call's value / 1e6; 0 when none is held
	n   int   // the digits of hi in buf
	buf [20]byte
}

// digits2 is "00" through "99".
const digits2 = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// Append appends v in decimal to dst.
func (s *Stamps) Append(dst []byte, v int64) []byte {
	if v < 1e6 {
		return strconv.AppendInt(dst, v, 10)
	}
	hi, lo := v/1e6, int(v%1e6)
	if hi != s.hi {
		s.hi, s.n = hi, len(strconv.AppendInt(s.buf[:0], hi, 10))
	}
	a, b, c := lo/10000*2, lo/100%100*2, lo%100*2
	return append(append(dst, s.buf[:s.n]...), digits2[a], digits2[a+1], digits2[b], digits2[b+1], digits2[c], digits2[c+1])
}
