package agg

import (
	"errors"
	"math"
	"strconv"
)

// ErrInvalid marks every error about a malformed specification (duration,
// downsampler, fill policy, rate options). The message is OpenTSDB's own, so
// the HTTP layer can answer 400 with it verbatim.
var ErrInvalid = errors.New("invalid query specification")

// InvalidError is a malformed specification, worded as OpenTSDB words it.
type InvalidError struct {
	Msg string
}

// Error returns the OpenTSDB message.
func (e *InvalidError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(msg string) error { return &InvalidError{Msg: msg} }

// ParseDuration parses OpenTSDB's relative duration (DateTime.parseDuration):
// a positive integer then a unit, ms, s, m, h, d, w (7 d), n (30 d) or
// y (365 d), returned in milliseconds. Like OpenTSDB it reads the leading
// digits and the last character (two for "ms"), ignoring anything between.
func ParseDuration(s string) (int64, error) {
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits == len(s) {
		return 0, invalid("Invalid duration, must have an integer and unit: " + s)
	}
	n, err := strconv.ParseInt(s[:digits], 10, 64)
	if err != nil {
		return 0, invalid("Invalid duration (number): " + s)
	}
	if n <= 0 {
		return 0, invalid("Zero or negative duration: " + s)
	}
	mult, ok := unitMillis(s)
	if !ok {
		return 0, invalid("Invalid duration (suffix): " + s)
	}
	if float64(n)*float64(mult) >= math.MaxInt64 {
		return 0, invalid("Duration must be < Long.MAX_VALUE ms: " + s)
	}
	return n * mult, nil
}

// unitMillis returns the milliseconds of the unit ending s.
func unitMillis(s string) (int64, bool) {
	switch lower(s[len(s)-1]) {
	case 's':
		if len(s) >= 2 && s[len(s)-2] == 'm' {
			return 1, true
		}
		return 1000, true
	case 'm':
		return 60 * 1000, true
	case 'h':
		return 3600 * 1000, true
	case 'd':
		return 86400 * 1000, true
	case 'w':
		return 7 * 86400 * 1000, true
	case 'n':
		return 30 * 86400 * 1000, true
	case 'y':
		return 365 * 86400 * 1000, true
	}
	return 0, false
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
