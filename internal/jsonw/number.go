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
// Float.toString (bits 32) does. Nonzero integers below 1e7 in magnitude
// are written by AppendInt, without strconv's shortest-digit search (a
// third of the time for them, BenchmarkAppendJava); -0 keeps its sign on
// the strconv path.
func appendJava(dst []byte, f float64, bits int) []byte {
	switch abs := math.Abs(f); {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case abs != 0 && abs < 1e7 && f == math.Trunc(f):
		return append(strconv.AppendInt(dst, int64(f), 10), '.', '0')
	case abs == 0:
		return append(strconv.AppendFloat(dst, f, 'f', -1, bits), '.', '0') // 0.0, -0.0
	case abs >= 1e-3 && abs < 1e7:
		// Not a whole number (the case above took those): its 'f' form
		// has a point. A double's digits take the fast path (shortest.go)
		// unless it declines.
		if bits == 64 {
			if d, e, ok := shortest(abs); ok {
				return appendDecimal(dst, f < 0, d, e)
			}
		}
		return strconv.AppendFloat(dst, f, 'f', -1, bits)
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bits)
	e := 0
	for s[e] != 'e' {
		e++
	}
	dst = append(dst, s[:e]...)
	if !containsDot(s[:e]) {
		dst = append(dst, '.', '0')
	}
	dst = append(dst, 'E')
	exp := s[e+1:]
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

func containsDot(b []byte) bool {
	for _, c := range b {
		if c == '.' {
			return true
		}
	}
	return false
}
