package hist

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseBuckets reads the telnet bucket form of HistogramDataPointRpc,
// "<lo>,<hi>=<count>:...:u=<underflow>:o=<overflow>", into h (reset to
// codec id), with its messages: parts split on ':', each "key=value",
// the key "u" or "o" (any case) or two bounds split on ','. Numbers are
// read as Java's Long.parseLong and Float.parseFloat read them.
func ParseBuckets(h *Histogram, id uint8, s string) error {
	h.Reset(id)
	for _, part := range strings.Split(s, ":") {
		kv := strings.Split(part, "=")
		if len(kv) != 2 {
			return fmt.Errorf("Improperly formatted bucket: %s", part)
		}
		key := strings.ToLower(kv[0])
		switch key {
		case "u", "o":
			n, err := JavaParseLong(kv[1])
			if err != nil {
				return err
			}
			if key == "u" {
				h.Underflow = n
			} else {
				h.Overflow = n
			}
			continue
		}
		bounds := strings.Split(key, ",")
		if len(bounds) != 2 {
			return fmt.Errorf("Improperly formatted bounds: %s", part)
		}
		lo, err := JavaParseFloat(bounds[0])
		if err != nil {
			return err
		}
		hi, err := JavaParseFloat(bounds[1])
		if err != nil {
			return err
		}
		n, err := JavaParseLong(kv[1])
		if err != nil {
			return err
		}
		if len(h.Buckets) >= MaxBuckets && h.Count(lo, hi) == 0 {
			return fmt.Errorf("more than %d buckets", MaxBuckets)
		}
		h.Set(lo, hi, n)
	}
	return nil
}

// NumberError is Java's NumberFormatException.
type NumberError struct{ Msg string }

func (e *NumberError) Error() string { return e.Msg }

// JavaParseLong is Long.parseLong: an optional sign, decimal digits.
func JavaParseLong(s string) (int64, error) {
	t := s
	if strings.HasPrefix(t, "+") {
		t = t[1:]
		if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") {
			t = "x"
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || t == "" {
		return 0, &NumberError{Msg: `For input string: "` + s + `"`}
	}
	return n, nil
}

// JavaParseFloat is Float.parseFloat for the forms collectors send: an
// optional sign, decimal or exponent notation, an optional f/F/d/D
// suffix, NaN and Infinity, surrounding spaces trimmed.
func JavaParseFloat(s string) (float32, error) {
	t := strings.TrimSpace(s)
	if n := len(t); n > 1 && strings.ContainsRune("fFdD", rune(t[n-1])) && !strings.HasSuffix(t, "Infinity") {
		t = t[:n-1]
	}
	bad := t == "" || strings.ContainsAny(t, "xXpP_") ||
		strings.EqualFold(t, "inf") || strings.EqualFold(t, "+inf") || strings.EqualFold(t, "-inf") ||
		(strings.ContainsAny(t, "nN") && t != "NaN" && t != "+NaN" && t != "-NaN")
	switch t {
	case "Infinity", "+Infinity", "-Infinity", "NaN", "+NaN", "-NaN":
		bad = false
		t = strings.Replace(strings.TrimPrefix(t, "+"), "Infinity", "Inf", 1)
	}
	if bad {
		return 0, &NumberError{Msg: `For input string: "` + s + `"`}
	}
	f, err := strconv.ParseFloat(t, 32)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return float32(f), nil // Java rounds to infinity or zero
		}
		return 0, &NumberError{Msg: `For input string: "` + s + `"`}
	}
	return float32(f), nil
}
