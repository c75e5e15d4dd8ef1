package parse

import (
	"math"
	"strconv"
	"unsafe"
)

// pow10 are the powers of ten that are exact float64 values.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// ParseFloat parses a decimal float, [+-]digits[.digits][(e|E)[+-]digits]
// with at least one mantissa digit ("1.", ".5" and "-0" included). ok is
// false on any other text (hex, "inf", "nan", underscores, blanks). A value
// beyond float64's range is ±Inf with ok true: callers refuse it in their
// protocol's words. The result equals strconv.ParseFloat's bit for bit.
func ParseFloat(b []byte) (f float64, ok bool) {
	mant, exp, neg, exact, ok := scanDecimal(b)
	if !ok {
		return 0, false
	}
	if exact && mant <= 1<<53 && exp >= -22 && exp <= 22 {
		// Both operands are exact doubles, so one IEEE operation rounds
		// correctly, exactly as strconv's full algorithm does.
		f = float64(mant)
		if exp < 0 {
			f /= pow10[-exp]
		} else {
			f *= pow10[exp]
		}
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(unsafeString(b), 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0, false
	}
	return f, true
}

// scanDecimal checks the syntax of a decimal float and reads its mantissa
// digits (mant, scaled by 10^exp). exact is false when the digits do not
// fit in mant; the caller then falls back to strconv.
func scanDecimal(b []byte) (mant uint64, exp int, neg, exact, ok bool) {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	exact = true
	digits := 0
	for ; i < len(b) && isDigit(b[i]); i++ {
		mant, exact = addDigit(mant, b[i], exact)
		if !exact {
			exp++ // a dropped integer digit still scales the value
		}
		digits++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && isDigit(b[i]); i++ {
			if exact {
				mant, exact = addDigit(mant, b[i], exact)
				if exact {
					exp--
				}
			}
			digits++
		}
	}
	if digits == 0 {
		return 0, 0, false, false, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		e, n, eok := scanExponent(b[i+1:])
		if !eok {
			return 0, 0, false, false, false
		}
		exp += e
		i += 1 + n
		if e > 10000 || e < -10000 {
			exact = false
		}
	}
	return mant, exp, neg, exact, i == len(b)
}

// addDigit appends one decimal digit to m; exact turns false once m would
// pass 10^19 (the digit is then dropped).
func addDigit(m uint64, c byte, exact bool) (uint64, bool) {
	if !exact || m > (math.MaxUint64-9)/10 {
		return m, false
	}
	return m*10 + uint64(c-'0'), true
}

// scanExponent reads [+-]digits and returns the value (saturated to keep
// it an int), the bytes read and whether there was a digit.
func scanExponent(b []byte) (e, n int, ok bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		n++
	}
	start := n
	for ; n < len(b) && isDigit(b[n]); n++ {
		if e < 1_000_000 {
			e = e*10 + int(b[n]-'0')
		}
	}
	if neg {
		e = -e
	}
	return e, n, n > start
}

// ParseInt parses a strict decimal int64: an optional sign and at least one
// digit. ok is false on other text or overflow.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	digits := b
	if neg || b[0] == '+' {
		digits = b[1:]
	}
	u, ok := ParseUint(digits)
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return -int64(u), true //nolint:gosec // u <= 2^63 negates exactly
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// ParseUint parses at least one decimal digit into a uint64; ok is false on
// other bytes or overflow.
func ParseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if len(b) <= 19 { // at most 10^19-1 < 2^64: no overflow to check
		var u uint64
		for _, c := range b {
			d := c - '0'
			if d > 9 {
				return 0, false
			}
			u = u*10 + uint64(d)
		}
		return u, true
	}
	var u uint64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			if u > math.MaxUint64/10 || u*10 > math.MaxUint64-uint64(c-'0') {
				return 0, false
			}
		}
		u = u*10 + uint64(c-'0')
	}
	return u, true
}

func isDigit(c byte) bool { return c-'0' <= 9 }

// unsafeString views b as a string without copying; the string must not
// outlive b's next modification.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
