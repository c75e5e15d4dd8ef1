package jsonw

import (
	"math"
	"math/bits"
	"strconv"
)

// shortest finds the digits of a double the way Raffaello Giulietti's
// Schubfach does (the algorithm behind Java 19's Double.toString; "The
// Schubfach way to render doubles", 2020): from the double's significand
// c and binary exponent q, it computes with one 126-bit power of ten
// the three scaled bounds of the rounding interval, rounded to odd, and
// picks the decimal of one digit fewer when exactly one lies inside,
// else the one of the scale's two neighbours inside and closest.
//
// It is a fast path, not a second definition: strconv's shortest digits
// stay the reference (TestShortestMatchesStrconv), and shortest declines
// (ok false) every case in which the two could be argued to differ or
// that callers do not need fast: zero, subnormals, infinities, NaN, the
// significand 2^52 (whose interval is lopsided), a rounding interval
// holding both neighbours of the shorter scale, and an exact tie between
// two digits strings. Callers then use strconv.
//
// With appendDecimal it writes a double in under half of
// strconv.AppendFloat's time on the values answers hold
// (BenchmarkAppendJava): one table load, three 64×128-bit products, and
// digits written two at a time.
func shortest(v float64) (f uint64, e int, ok bool) {
	b := math.Float64bits(v)
	bq := int(b>>52) & 0x7ff
	t := b & (1<<52 - 1)
	if bq == 0 || bq == 0x7ff || t == 0 {
		return 0, 0, false
	}
	q := bq - 1075
	c := 1<<52 | t
	k := flog10pow2(q)
	h := q + flog2pow10(-k) + 2
	g := &pow10g[k-pow10gMin]
	out := c & 1
	cb := c << 2
	vb := rop(g[0], g[1], cb<<h)
	vbl := rop(g[0], g[1], (cb-2)<<h)
	vbr := rop(g[0], g[1], (cb+2)<<h)
	s := vb >> 2
	if s >= 100 {
		sp10 := s / 10 * 10
		tp10 := sp10 + 10
		upin := vbl+out <= sp10<<2
		wpin := tp10<<2+out <= vbr
		switch {
		case upin && wpin:
			return 0, 0, false
		case upin: // the trailing zero dropped here, not by the caller
			return sp10 / 10, k + 1, true
		case wpin:
			return tp10 / 10, k + 1, true
		}
	}
	s1 := s + 1
	uin := vbl+out <= s<<2
	win := s1<<2+out <= vbr
	switch {
	case uin && !win:
		return s, k, true
	case win && !uin:
		return s1, k, true
	}
	switch cmp := int64(vb - (s+s1)<<1); {
	case cmp < 0:
		return s, k, true
	case cmp > 0:
		return s1, k, true
	}
	return 0, 0, false
}

// rop is g·cp / 2^127 rounded to odd, for g = g1·2^63 + g0 and cp below
// 2^63: the bit that says "inexact" is or-ed into the lowest one.
func rop(g1, g0, cp uint64) uint64 {
	x1, _ := bits.Mul64(g0, cp)
	y1, y0 := bits.Mul64(g1, cp)
	z := y0>>1 + x1
	return (y1 + z>>63) | ((z&(1<<63-1))+(1<<63-1))>>63
}

// flog10pow2 is ⌊q·log10(2)⌋ and flog2pow10 ⌊e·log2(10)⌋, exact over the
// exponents doubles have (TestFloorLogs).
func flog10pow2(q int) int { return int((int64(q) * 661971961083) >> 41) }
func flog2pow10(e int) int { return int((int64(e) * 913124641741) >> 38) }

// pow10g holds, for each k in [pow10gMin, pow10gMax], g = ⌊10^-k·2^-r⌋+1
// with r = ⌊-k·log2(10)⌋ - 125, a 126-bit number split as its high 63
// and low 63 bits (pow10g_table.go, written and checked by
// TestPow10Table).
const pow10gMin, pow10gMax = -324, 292

// AppendFixed appends f as strconv.AppendFloat(dst, f, 'f', -1, 64)
// does (Prometheus's form of a sample value), in under half its time for
// a value that is not whole (shortest).
func AppendFixed(dst []byte, f float64) []byte {
	if abs := math.Abs(f); abs < 1e21 && abs != math.Trunc(abs) {
		if d, e, ok := shortest(abs); ok {
			return appendDecimal(dst, f < 0, d, e)
		}
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// appendDecimal appends f·10^e, a value that is not whole, in plain
// notation ("0.00123", "61.347"), as Double.toString writes the range
// [1e-3, 1e7) and strconv's 'f' form every value.
func appendDecimal(dst []byte, neg bool, f uint64, e int) []byte {
	for f%10 == 0 {
		f /= 10
		e++
	}
	var buf [24]byte
	digits := putDigits(&buf, f)
	if neg {
		dst = append(dst, '-')
	}
	switch dp := len(digits) + e; {
	case dp <= 0:
		dst = append(dst, '0', '.')
		for ; dp < 0; dp++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case dp < len(digits):
		dst = append(dst, digits[:dp]...)
		dst = append(dst, '.')
		return append(dst, digits[dp:]...)
	default:
		dst = append(dst, digits...)
		for ; dp > len(digits); dp-- {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	}
}

// putDigits writes f, below 10^17, at the end of buf and returns its
// digits. The three groups of eight digits have no dependence on each
// other, so their divisions overlap instead of forming one chain of
// sixteen.
func putDigits(buf *[24]byte, f uint64) []byte {
	hi, lo := f/1e8, f%1e8
	put8(buf[16:24], lo)
	put8(buf[8:16], hi%1e8)
	buf[7] = byte('0' + hi/1e8)
	n := int(bits.Len64(f)*1233) >> 12 // ⌊log10⌋ of f's top power of two
	if f < pow10u[n] {
		n--
	}
	return buf[len(buf)-n-1:]
}

// put8 writes v, below 10^8, as eight digits.
func put8(b []byte, v uint64) {
	_ = b[7]
	x, y := v/10000, v%10000
	*(*[2]byte)(b[0:]) = pairs[x/100]
	*(*[2]byte)(b[2:]) = pairs[x%100]
	*(*[2]byte)(b[4:]) = pairs[y/100]
	*(*[2]byte)(b[6:]) = pairs[y%100]
}

// pairs is digits2 (stamp.go) as two-byte elements, stored by one move
// each.
var pairs = func() (p [100][2]byte) {
	for i := range p {
		p[i] = [2]byte{digits2[2*i], digits2[2*i+1]}
	}
	return p
}()

var pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}
