package tsquery

import (
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zone names resolve the same on every host

	"github.com/tsd-db/tsd/query/agg"
)

// ParseTime parses a query start or end time as OpenTSDB 2.4's
// DateTime.parseDateTimeString does and returns milliseconds since the
// epoch. now (ms) resolves "now" and "<n><unit>-ago"; absolute dates are
// read in the zone named tz, or in def (UTC when nil) when tz is empty. An
// empty s returns -1, as OpenTSDB does.
func ParseTime(s, tz string, now int64, def *time.Location) (int64, error) {
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return -1, nil
	case isMillis(s):
		v, err := javaParseLong(s[:len(s)-2])
		if err != nil {
			return 0, badRequest("Invalid time: " + s + ". " + err.Error())
		}
		return v, nil
	case lower == "now":
		return now, nil
	case strings.HasSuffix(lower, "-ago"):
		d, err := agg.ParseDuration(s[:len(s)-4])
		if err != nil {
			return 0, wrap(err)
		}
		return now - d, nil
	case strings.ContainsAny(s, "/:"):
		return parseAbsolute(s, tz, def)
	}
	return parseEpoch(s)
}

// isMillis matches ^[0-9]+ms$.
func isMillis(s string) bool {
	digits := strings.TrimSuffix(s, "ms")
	return len(digits) > 0 && len(digits) == len(s)-2 && allDigits(digits)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseEpoch reads seconds (10 digits or fewer), milliseconds, or
// seconds.millis.
func parseEpoch(s string) (int64, error) {
	if strings.Contains(s, ".") {
		return parseDotted(s)
	}
	v, err := javaParseLong(s)
	if err != nil {
		return 0, badRequest("Invalid time: " + s + ". " + err.Error())
	}
	if v < 0 {
		return 0, badRequest("Invalid time: " + s + ". Negative timestamps are not supported.")
	}
	if len(s) <= 10 {
		v *= 1000
	}
	return v, nil
}

// parseDotted reads ^[0-9]{10}\.[0-9]{1,3}$ as seconds and a fraction.
func parseDotted(s string) (int64, error) {
	sec, frac, _ := strings.Cut(s, ".")
	if len(sec) != 10 || len(frac) < 1 || len(frac) > 3 || !allDigits(sec) || !allDigits(frac) {
		return 0, badRequest("Invalid time: " + s + ". Millisecond timestamps must be in the format " +
			"<seconds>.<ms> where the milliseconds are limited to 3 digits")
	}
	secs, _ := strconv.ParseInt(sec, 10, 64)
	ms, _ := strconv.ParseInt((frac + "00")[:3], 10, 64)
	return secs*1000 + ms, nil
}

// absoluteLayouts are OpenTSDB's SimpleDateFormat patterns by input length:
// the separators each field must be preceded by.
var absoluteLayouts = map[int][]byte{
	10: {0, '/', '/'},
	16: {0, '/', '/', '?', ':'},
	19: {0, '/', '/', '?', ':', ':'},
}

// parseAbsolute reads yyyy/MM/dd[(-| )HH:mm[:ss]] leniently, as a Java
// SimpleDateFormat does: out-of-range fields roll over and text after the
// last field is ignored.
func parseAbsolute(s, tz string, def *time.Location) (int64, error) {
	seps, ok := absoluteLayouts[len(s)]
	if !ok {
		return 0, badRequest("Invalid absolute date: " + s)
	}
	loc := def
	if tz != "" {
		l, err := LoadLocation(tz)
		if err != nil {
			return 0, badRequest("Invalid timezone name: " + tz)
		}
		loc = l
	}
	if loc == nil {
		loc = time.UTC
	}
	timeSep := byte(' ')
	if strings.Contains(s, "-") {
		timeSep = '-'
	}
	var f [6]int
	rest := s
	for i, sep := range seps {
		if sep == '?' {
			sep = timeSep
		}
		var ok bool
		if f[i], rest, ok = field(rest, sep); !ok {
			return 0, badRequest("Invalid date: " + s + ". Unparseable date: \"" + s + "\"")
		}
	}
	return time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, loc).UnixMilli(), nil
}

// field consumes sep (unless 0) and then a run of digits.
func field(s string, sep byte) (int, string, bool) {
	if sep != 0 {
		if s == "" || s[0] != sep {
			return 0, s, false
		}
		s = s[1:]
	}
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, s, false
	}
	v, _ := strconv.Atoi(s[:n])
	return v, s[n:], true
}

// zones caches loaded time zones by name.
var zones sync.Map

// LoadLocation returns the zone with an IANA name (Java's
// TimeZone.getAvailableIDs holds the same names); "Local" and "" are not
// zone names.
func LoadLocation(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	if name == "" || name == "Local" {
		return nil, badRequest("Invalid timezone name: " + name)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, l)
	return l, nil
}
