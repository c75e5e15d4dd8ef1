package tsquery

import (
	"errors"
	"math"
	"unicode/utf8"
)

// javaParseLong is OpenTSDB's Tags.parseLong: an optional sign and decimal
// digits, with its error messages (they end up in "Invalid time: ..." and
// rate option errors).
func javaParseLong(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("Empty string")
	}
	digits, neg := s, false
	if s[0] == '+' || s[0] == '-' {
		if len(s) == 1 {
			return 0, errors.New("Just a sign, no value: " + s)
		}
		if len(s) > 20 {
			return 0, errors.New("Value too long: " + s)
		}
		digits, neg = s[1:], s[0] == '-'
	} else if len(s) > 19 {
		return 0, errors.New("Value too long: " + s)
	}
	var v uint64
	for i := 0; i < len(digits); {
		c, size := utf8.DecodeRuneInString(digits[i:])
		if c < '0' || c > '9' {
			return 0, errors.New("Invalid character '" + string(c) + "' in " + s)
		}
		v = v*10 + uint64(c-'0')
		i += size
	}
	switch {
	case neg && v <= 1<<63:
		return -int64(v), nil
	case !neg && v <= math.MaxInt64:
		return int64(v), nil
	}
	return 0, errors.New("Overflow in " + s)
}
