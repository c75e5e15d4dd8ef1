package tsquery

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// The POST body is read by Jackson in OpenTSDB, which coerces scalars: a
// number where a string is expected becomes its text, "true" where a
// boolean is expected is true, 1 is true, and so on. These types accept
// what Jackson accepts for the fields Grafana and client libraries send.

var errType = errors.New("unexpected JSON type")

// flexString is a string field that also takes a number or a boolean
// (their JSON text). null leaves it empty.
type flexString struct {
	s   string
	set bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errType
	case b[0] == '"':
		f.set = true
		return json.Unmarshal(b, &f.s)
	case string(b) == "null":
		*f = flexString{}
		return nil
	case b[0] == '{' || b[0] == '[':
		return errType
	}
	f.s, f.set = string(b), true
	return nil
}

// flexBool is a boolean that also takes "true"/"false" (any case) and
// numbers (zero is false). null is false.
type flexBool struct {
	b   bool
	set bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	switch {
	case s == "null" || (s == "" && len(b) > 0):
		*f = flexBool{}
	case s == "true" || s == "True" || s == "TRUE":
		*f = flexBool{true, true}
	case s == "false" || s == "False" || s == "FALSE":
		*f = flexBool{false, true}
	default:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || len(b) == 0 || b[0] == '"' {
			return errType
		}
		*f = flexBool{v != 0, true}
	}
	return nil
}

// flexInt is an int64 that also takes a float (truncated) or a numeric
// string. null leaves it unset.
type flexInt struct {
	v   int64
	set bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	if s == "null" {
		*f = flexInt{}
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = flexInt{v, true}
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.Abs(v) >= math.MaxInt64 {
		return errType
	}
	*f = flexInt{int64(v), true}
	return nil
}

// flexFloat is a float32 that also takes a numeric string.
type flexFloat struct {
	v float32
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexFloat) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return errType
	}
	f.v = float32(v)
	return nil
}

// lastKey returns which of the keys appears last at the top level of the
// JSON object obj (-1 if none); OpenTSDB applies "tags" and "filters" in
// body order, and the later one replaces the other.
func lastKey(obj []byte, keys ...string) int {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return -1
	}
	found := -1
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return found
		}
		name, _ := tok.(string)
		for i, k := range keys {
			if equalFoldASCII(name, k) {
				found = i
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return found
		}
	}
	return found
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
