package retention

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrSyntax marks a setting that does not parse; the error names the rule.
var ErrSyntax = errors.New("retention: bad rule")

// Forever is the Keep of a rule that never expires points.
const Forever time.Duration = 0

// Rule is one `glob:duration` entry.
type Rule struct {
	// Interval is the rollup interval the rule applies to ("1h" for a rule
	// written `@1h glob:duration`), "" for raw data.
	Interval string
	// Pattern is the glob as written, escapes included.
	Pattern string
	// Keep is how long points are kept; Forever (0) keeps them forever.
	Keep time.Duration

	glob glob
}

// Rules is a parsed retention setting. The zero value has no rules and
// keeps everything. Rules are immutable and safe for concurrent use.
type Rules struct {
	rules []Rule
}

// Parse parses a tsd.storage.retention setting. Errors wrap ErrSyntax and
// name the rule (by position and text) and what is wrong with it.
func Parse(s string) (*Rules, error) {
	r := &Rules{}
	if strings.TrimSpace(s) == "" {
		return r, nil
	}
	for i, text := range splitRules(s) {
		rule, err := parseRule(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("%w %d %q: %v", ErrSyntax, i+1, strings.TrimSpace(text), err)
		}
		r.rules = append(r.rules, rule)
	}
	return r, nil
}

// splitRules splits s at commas that no backslash escapes.
func splitRules(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseRule parses one `[@interval ]glob:duration`.
func parseRule(text string) (Rule, error) {
	interval := ""
	if rest, ok := strings.CutPrefix(text, "@"); ok {
		name, after, found := strings.Cut(rest, " ")
		if !found || name == "" {
			return Rule{}, errors.New("want @interval glob:duration")
		}
		interval, text = name, strings.TrimSpace(after)
	}
	rule, err := parseGlobRule(text)
	rule.Interval = interval
	return rule, err
}

// parseGlobRule parses `glob:duration`.
func parseGlobRule(text string) (Rule, error) {
	i := strings.LastIndexByte(text, ':')
	if i < 0 {
		return Rule{}, errors.New("want glob:duration")
	}
	pattern, dur := strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:])
	g, err := compileGlob(pattern)
	if err != nil {
		return Rule{}, err
	}
	keep, err := parseKeep(dur)
	if err != nil {
		return Rule{}, err
	}
	return Rule{Pattern: pattern, Keep: keep, glob: g}, nil
}

// parseKeep parses `forever` or a positive duration.
func parseKeep(s string) (time.Duration, error) {
	if s == "forever" {
		return Forever, nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q is not positive (use forever to keep everything)", s)
	}
	return d, nil
}

// units are OpenTSDB's duration units (DateTime.parseDuration).
var units = []struct {
	name string
	d    time.Duration
}{
	{"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour},
	{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}, {"n", 30 * 24 * time.Hour}, {"y", 365 * 24 * time.Hour},
}

// ParseDuration parses an integer followed by one of OpenTSDB's units: ms,
// s, m, h, d, w, n (30 days), y (365 days), such as 90d or 12h.
func ParseDuration(s string) (time.Duration, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("duration %q does not start with a number", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("duration %q: number out of range", s)
	}
	for _, u := range units {
		if s[i:] == u.name {
			if n > math.MaxInt64/int64(u.d) {
				return 0, fmt.Errorf("duration %q is too long", s)
			}
			return time.Duration(n) * u.d, nil
		}
	}
	return 0, fmt.Errorf("duration %q: unit %q is not one of ms, s, m, h, d, w, n, y", s, s[i:])
}

// ForInterval returns the rules of rollup interval name (those written
// `@name ...`) as rules of their own, which Match and Cutoff evaluate;
// ForInterval("") is the raw data's rules.
func (r *Rules) ForInterval(name string) *Rules {
	out := &Rules{}
	for _, rule := range r.rules {
		if rule.Interval == name {
			rule.Interval = ""
			out.rules = append(out.rules, rule)
		}
	}
	return out
}

// Intervals returns the rollup intervals the rules name, in order, once
// each.
func (r *Rules) Intervals() []string {
	var out []string
	for _, rule := range r.rules {
		if rule.Interval != "" && !slices.Contains(out, rule.Interval) {
			out = append(out, rule.Interval)
		}
	}
	return out
}

// Len returns the number of rules.
func (r *Rules) Len() int { return len(r.rules) }

// Rule returns rule i, in the order of the setting.
func (r *Rules) Rule(i int) Rule { return r.rules[i] }

// Match returns how long points of metric are kept: the Keep of the first
// rule matching it, or Forever when none does. i is the index of the rule,
// -1 when none matched.
func (r *Rules) Match(metric string) (keep time.Duration, i int) {
	for i := range r.rules {
		if r.rules[i].Interval == "" && r.rules[i].glob.match(metric) {
			return r.rules[i].Keep, i
		}
	}
	return Forever, -1
}

// Cutoff returns the first millisecond still kept for metric at now:
// points with timestamps before it are expired. It is math.MinInt64 when
// the metric is kept forever.
func (r *Rules) Cutoff(metric string, now time.Time) int64 {
	keep, _ := r.Match(metric)
	if keep == Forever {
		return math.MinInt64
	}
	return now.UnixMilli() - keep.Milliseconds()
}

// String returns the setting in canonical form: rules joined by commas,
// durations in the largest unit that divides them.
func (r *Rules) String() string {
	var b strings.Builder
	for i, rule := range r.rules {
		if i > 0 {
			b.WriteByte(',')
		}
		if rule.Interval != "" {
			b.WriteString("@" + rule.Interval + " ")
		}
		b.WriteString(rule.Pattern)
		b.WriteByte(':')
		b.WriteString(FormatKeep(rule.Keep))
	}
	return b.String()
}

// FormatKeep writes a Keep as ParseDuration reads it: forever, or the
// largest unit that divides it (months excepted: 90d stays 90d).
func FormatKeep(d time.Duration) string {
	if d == Forever {
		return "forever"
	}
	for i := len(units) - 1; i > 0; i-- {
		if units[i].name != "n" && d%units[i].d == 0 {
			return strconv.FormatInt(int64(d/units[i].d), 10) + units[i].name
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
