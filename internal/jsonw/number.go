package jsonw

import (
	"math"
	"strconv"
)

// AppendJavaDouble appends f as Java's Double.toString writes it: plain
// decimal with at least one fractional digit for magnitudes in [1e-3,
// 1e7) and zero, otherwise d.dddE[-]n; NaN, Infinity and -Infinity by
// name, unquoted.
func AppendJavaDouble(dst []byte, f float64) []byte { return appendJava(dst, f, 64) }

// AppendJavaFloat appends f as Java's Float.toString writes it, which is
// how Jackson writes a float field: the shortest digits that read back to
// f, in Double.toString's layout.
func AppendJavaFloat(dst []byte, f float32) []byte { return appendJava(dst, float64(f), 32) }

// AppendJacksonDouble appends f as Jackson writes a double: Java's
// Double.toString, with NaN and the infinities quoted ("NaN",
// "Infinity", "-Infinity").
func AppendJacksonDouble(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		dst = append(dst, '"')
		return append(appendJava(dst, f, 64), '"')
	}
	return appendJava(dst, f, 64)
}

// appendJava formats f as Java's Double.toString (bits 64) or
// Float.toString (bits 32) does. Integers below 1e7 are written by
// AppendInt; every other finite value from strconv's shortest digits in
// its 'e' form, which copies the digits whole, laid out here (strconv's
// 'f' form writes the fraction a byte at a time, the most of a query
// answer's cost in a profile of the 1h-avg rollup figure, bench/README.md).
func appendJava(dst []byte, f float64, bits int) []byte {
	switch abs := math.Abs(f); {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case abs == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	case abs < 1e7 && f == math.Trunc(f):
		return append(strconv.AppendInt(dst, int64(f), 10), '.', '0')
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bits)
	if s[0] == '-' {
		dst, s = append(dst, '-'), s[1:]
	}
	e := 1
	for s[e] != 'e' {
		e++
	}
	exp := parseExp(s[e+1:])
	if exp >= -3 && exp < 7 {
		return appendPlain(dst, s[:e], exp)
	}
	dst = append(dst, s[:e]...)
	if e == 1 {
		dst = append(dst, '.', '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// appendPlain appends mant×10^exp, mant strconv's "d" or "d.ddd", as
// plain decimal with at least one fractional digit; -3 <= exp < 7.
func appendPlain(dst, mant []byte, exp int) []byte {
	var digs [24]byte
	nd := copy(digs[:], mant[:1])
	if len(mant) > 2 {
		nd += copy(digs[1:], mant[2:])
	}
	d := digs[:nd]
	if exp < 0 { // 0.00ddd
		dst = append(dst, '0', '.')
		dst = append(dst, "00"[:-exp-1]...)
		return append(dst, d...)
	}
	ip := exp + 1 // integer digits
	if nd <= ip {
		dst = append(dst, d...)
		dst = append(dst, "000000"[:ip-nd]...)
		return append(dst, '.', '0')
	}
	dst = append(dst, d[:ip]...)
	dst = append(dst, '.')
	return append(dst, d[ip:]...)
}

// parseExp reads strconv's exponent: a sign and two or three digits.
func parseExp(s []byte) int {
	n := 0
	for _, c := range s[1:] {
		n = n*10 + int(c-'0')
	}
	if s[0] == '-' {
		return -n
	}
	return n
}
