package parse

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/tsd-db/tsd/series"
)

// MaxOpenTSDBMillis is the largest millisecond timestamp OpenTSDB accepts
// (Const.MAX_MS_TIMESTAMP).
const MaxOpenTSDBMillis = 9999999999999

// secondMask selects the upper 32 bits: a timestamp with any of them set is
// in milliseconds (Const.SECOND_MASK).
const secondMask uint64 = 0xFFFFFFFF00000000

// NumberFormatError is a value or timestamp that is not a number: Java's
// NumberFormatException, with its message (OpenTSDB's "put: invalid value:"
// line and "Unable to parse value to a number" detail).
type NumberFormatError struct {
	Msg string
}

// Error returns the Java message, e.g. "Invalid character 'x' in 12x".
func (e *NumberFormatError) Error() string { return e.Msg }

// ErrNotFinite is a value that parses to NaN or an infinity, which OpenTSDB
// refuses ("value is NaN or Infinite").
var ErrNotFinite = errors.New("value is NaN or Infinite")

// LooksLikeInteger reports whether value has none of '.', 'e', 'E', the
// test OpenTSDB uses to parse a value as an integer (Tags.looksLikeInteger).
func LooksLikeInteger(value []byte) bool {
	for _, c := range value {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// ParseLong is OpenTSDB's Tags.parseLong: strict decimal with an optional
// sign, at most 19 digits, with its error texts. It allocates only to
// build an error.
func ParseLong(s []byte) (int64, error) {
	if v, ok := ParseInt(s); ok && len(s) > 0 && isDigit(s[len(s)-1]) && lenOK(s) {
		return v, nil
	}
	return 0, parseLongError(s)
}

// lenOK applies Java's length limits: 19 characters, 20 with a sign.
func lenOK(s []byte) bool {
	if s[0] == '+' || s[0] == '-' {
		return len(s) <= 20
	}
	return len(s) <= 19
}

// parseLongError returns Tags.parseLong's exception for text ParseInt
// refused, checking in Java's order.
func parseLongError(s []byte) error {
	n := len(s)
	switch {
	case n == 0:
		return &NumberFormatError{Msg: "Empty string"}
	case (s[0] == '+' || s[0] == '-') && n == 1:
		return &NumberFormatError{Msg: "Just a sign, no value: " + string(s)}
	case !lenOK(s):
		return &NumberFormatError{Msg: "Value too long: " + string(s)}
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i = 1
	}
	for ; i < n; i++ {
		if !isDigit(s[i]) {
			r, _ := utf8.DecodeRune(s[i:])
			return &NumberFormatError{Msg: "Invalid character '" + string(r) + "' in " + string(s)}
		}
	}
	return &NumberFormatError{Msg: "Overflow in " + string(s)}
}

// ParseOpenTSDBValue types a value as OpenTSDB does (docs/formats.md,
// Point qualifiers and values): integer
// text (LooksLikeInteger) through ParseLong, other text as a double stored
// as float32 when exact in single precision, else float64. Errors are a
// *NumberFormatError or ErrNotFinite. The returned point's T is zero.
func ParseOpenTSDBValue(value []byte) (series.Point, error) {
	if LooksLikeInteger(value) {
		v, err := ParseLong(value)
		return series.IntPoint(0, v), err
	}
	d, ok := ParseFloat(value)
	if !ok {
		// Java's Double.parseDouble also takes hex floats; strconv's
		// syntax is the nearest Go has.
		var err error
		if d, err = strconv.ParseFloat(unsafeString(value), 64); err != nil && !math.IsInf(d, 0) {
			return series.Point{}, &NumberFormatError{Msg: `For input string: "` + string(value) + `"`}
		}
	}
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return series.Float64Point(0, d), ErrNotFinite
	}
	if f := float32(d); float64(f) == d {
		return series.Float32Point(0, f), nil
	}
	return series.Float64Point(0, d), nil
}

// OpenTSDBMillis converts an OpenTSDB timestamp (> 0) to milliseconds: with
// any upper 32 bit set it is already milliseconds and must be at most
// MaxOpenTSDBMillis (ok false otherwise), else it is seconds.
func OpenTSDBMillis(ts int64) (ms int64, ok bool) {
	if uint64(ts)&secondMask != 0 {
		return ts, ts > 0 && ts <= MaxOpenTSDBMillis
	}
	return ts * 1000, true
}

// IsOpenTSDBMillis reports whether OpenTSDB takes timestamp ts as
// milliseconds (any of its upper 32 bits set), and so writes its point with
// a millisecond qualifier, even on a whole second (IncomingDataPoints,
// Internal.buildQualifier).
func IsOpenTSDBMillis(ts int64) bool { return uint64(ts)&secondMask != 0 }

// JavaDouble formats a double as Java's Double.toString does for the values
// OpenTSDB's messages show (NaN, infinities); finite values use Go's
// shortest form.
func JavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// AppendJavaValue appends OpenTSDB's stored form of v as Java prints it in
// "bad timestamp" messages, Arrays.toString(value) + '/' + flags: the
// value bytes (signed) and the qualifier flags, e.g. "[42]/0" or
// "[66, 40, 0, 0]/11".
func AppendJavaValue(dst []byte, v series.Point) []byte {
	var raw [8]byte
	n, flags := openTSDBValueBytes(&raw, v)
	dst = append(dst, '[')
	for i := 8 - n; i < 8; i++ {
		if i > 8-n {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendInt(dst, int64(int8(raw[i])), 10)
	}
	dst = append(dst, "]/"...)
	return strconv.AppendInt(dst, int64(flags), 10)
}

// openTSDBValueBytes writes v big-endian into the tail of raw and returns
// its width and flags (docs/formats.md, Point qualifiers and values).
func openTSDBValueBytes(raw *[8]byte, v series.Point) (n, flags int) {
	bits := v.Bits
	switch v.Kind {
	case series.Int:
		i := int64(v.Bits)
		switch {
		case i == int64(int8(i)):
			n = 1
		case i == int64(int16(i)):
			n = 2
		case i == int64(int32(i)):
			n = 4
		default:
			n = 8
		}
		flags = n - 1
	case series.Float32:
		bits, n, flags = uint64(math.Float32bits(float32(v.Float()))), 4, 0xB
	default:
		n, flags = 8, 0xF
	}
	for i := 7; i >= 0; i-- {
		raw[i] = byte(bits)
		bits >>= 8
	}
	return n, flags
}
