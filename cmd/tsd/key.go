package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// key is one configuration setting: its name, type, default, description,
// and the parser that stores a value where the setting is used.
type key struct {
	name  string // OpenTSDB-style dotted name, also the flag --name
	alias string // short flag without dashes ("port"), or ""
	typ   string // shown in --help: int, bool, string, duration, dense|opentsdb
	def   string // default, as text
	desc  string // one line for --help
	// set parses a value and stores it; its error says what was expected,
	// without the key name (the caller adds it).
	set func(string) error
	// get returns the current value as text, for /api/config.
	get func() string
	// given is true once the file or a flag set the key.
	given bool
}

// withAlias sets a short flag name for k and returns k.
func (k *key) withAlias(alias string) *key {
	k.alias = alias
	return k
}

// newKey binds a setting of type T to *dst, storing def there now.
func newKey[T any](dst *T, name string, def T, typ string, parse func(string) (T, error),
	format func(T) string, desc string) *key {
	*dst = def
	return &key{name: name, typ: typ, def: format(def), desc: desc, get: func() string { return format(*dst) }, set: func(s string) error {
		v, err := parse(s)
		if err == nil {
			*dst = v
		}
		return err
	}}
}

// intKey is an integer setting within [lo, hi].
func intKey(dst *int, name string, def, lo, hi int, desc string) *key {
	return newKey(dst, name, def, "int", func(s string) (int, error) { return parseInt(s, lo, hi) },
		strconv.Itoa, desc)
}

// boolKey is a boolean setting.
func boolKey(dst *bool, name string, def bool, desc string) *key {
	return newKey(dst, name, def, "bool", parseBool, strconv.FormatBool, desc)
}

// stringKey is a free-form string setting.
func stringKey(dst *string, name, def, desc string) *key {
	return newKey(dst, name, def, "string", func(s string) (string, error) { return s, nil },
		func(s string) string { return s }, desc)
}

// durationKey is a duration setting: Go syntax (90s, 1h30m) or whole days
// and weeks (7d, 2w).
func durationKey(dst *time.Duration, name string, def time.Duration, desc string) *key {
	return newKey(dst, name, def, "duration", parseDuration, formatDuration, desc)
}

// positiveDurationKey is a duration setting that must be above zero.
func positiveDurationKey(dst *time.Duration, name string, def time.Duration, desc string) *key {
	parse := func(s string) (time.Duration, error) {
		d, err := parseDuration(s)
		if err == nil && d <= 0 {
			err = fmt.Errorf("want a duration above zero, such as 10s")
		}
		return d, err
	}
	return newKey(dst, name, def, "duration", parse, formatDuration, desc)
}

// enumKey is a string setting limited to choices.
func enumKey(dst *string, name, def string, choices []string, desc string) *key {
	parse := func(s string) (string, error) {
		for _, c := range choices {
			if s == c {
				return s, nil
			}
		}
		return "", fmt.Errorf("want one of %s", strings.Join(choices, ", "))
	}
	return newKey(dst, name, def, strings.Join(choices, "|"), parse,
		func(s string) string { return s }, desc)
}

func parseInt(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("want an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("want %d..%d", lo, hi)
	}
	return n, nil
}

// parseBool accepts what OpenTSDB reads as true (true, yes, 1) and their
// opposites, in any case. Unlike OpenTSDB, anything else is an error rather
// than false, so a typo does not silently turn a feature off.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "yes", "1":
		return true, nil
	case "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("want true or false")
}

// parseDuration parses Go durations and whole days (d) or weeks (w).
func parseDuration(s string) (time.Duration, error) {
	if n := len(s); n > 1 && (s[n-1] == 'd' || s[n-1] == 'w') {
		unit := 24 * time.Hour
		if s[n-1] == 'w' {
			unit *= 7
		}
		v, err := strconv.ParseInt(s[:n-1], 10, 64)
		if err == nil && v >= 0 && v <= math.MaxInt64/int64(unit) {
			return time.Duration(v) * unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 90s, 15m, 1h or 7d")
	}
	return d, nil
}

// formatDuration prints d for --help, in days when whole.
func formatDuration(d time.Duration) string {
	if day := 24 * time.Hour; d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}
