package rollup

import (
	"slices"
	"strings"
)

// Usage says how a query may use rollup tables (OpenTSDB's
// TsdbQuery.ROLLUP_USAGE).
type Usage uint8

// The usages; the zero value is OpenTSDB's default.
const (
	// NoFallback reads the best interval and nothing else.
	NoFallback Usage = iota
	// Raw never reads rollups.
	Raw
	// Fallback tries the next candidate interval when one has no data.
	Fallback
	// FallbackRaw reads raw data when the best interval has none.
	FallbackRaw
)

var usageNames = [...]string{"ROLLUP_NOFALLBACK", "ROLLUP_RAW", "ROLLUP_FALLBACK", "ROLLUP_FALLBACK_RAW"}

// String is OpenTSDB's name of u.
func (u Usage) String() string { return usageNames[u] }

// ParseUsage reads a usage name ignoring case. As in OpenTSDB, an unknown
// or empty name means NoFallback; ok reports whether s named a usage.
func ParseUsage(s string) (u Usage, ok bool) {
	for i, n := range usageNames {
		if strings.EqualFold(s, n) {
			return Usage(i), true
		}
	}
	return NoFallback, false
}

// Fallback reports whether u falls back when an interval has no data.
func (u Usage) Fallback() bool { return u == Fallback || u == FallbackRaw }

// Candidates appends to dst the intervals that may serve a downsampler of
// dsSec seconds, as RollupConfig.getRollupInterval orders them: those
// whose length equals dsSec or divides it, longest first (so an exact
// match, when configured, comes first). Of two intervals of one length the
// later in the configuration is kept, as OpenTSDB's map keeps it. The
// default interval may be among them: it stands for raw data.
func (c *Config) Candidates(dst []*Interval, dsSec int64) []*Interval {
	n := len(dst)
	if dsSec <= 0 {
		return dst
	}
	for i := range c.Intervals {
		iv := &c.Intervals[i]
		if dsSec%iv.Seconds != 0 {
			continue
		}
		if j := slices.IndexFunc(dst[n:], func(o *Interval) bool { return o.Seconds == iv.Seconds }); j >= 0 {
			dst[n+j] = iv
			continue
		}
		dst = append(dst, iv)
	}
	slices.SortFunc(dst[n:], func(a, b *Interval) int {
		switch {
		case a.Seconds > b.Seconds:
			return -1
		case a.Seconds < b.Seconds:
			return 1
		}
		return 0
	})
	return dst
}

// Choose returns the interval a query downsampling by dsSec seconds reads
// under usage u (TsdbQuery.transformDownSamplerToRollupQuery): the first
// candidate, or nil for raw data when u is Raw, dsSec is not positive, no
// interval fits, or the best fit is the default interval.
func (c *Config) Choose(dsSec int64, u Usage) *Interval {
	if c == nil || u == Raw {
		return nil
	}
	var buf [8]*Interval
	cands := c.Candidates(buf[:0], dsSec)
	if len(cands) == 0 || cands[0].Default {
		return nil
	}
	return cands[0]
}
