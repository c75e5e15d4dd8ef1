package rollup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultConfigJSON is the configuration a new store gets when
// tsd.rollups.config is not given: raw data at the 1-minute default
// interval, hourly cells in day rows and daily cells in month rows.
const DefaultConfigJSON = `{"aggregationIds":{"sum":0,"count":1,"min":2,"max":3},"intervals":[` +
	`{"table":"tsdb","preAggregationTable":"tsdb-preagg","interval":"1m","rowSpan":"1h","defaultInterval":true},` +
	`{"table":"tsdb-rollup-1h","preAggregationTable":"tsdb-rollup-preagg-1h","interval":"1h","rowSpan":"1d"},` +
	`{"table":"tsdb-rollup-1d","preAggregationTable":"tsdb-rollup-preagg-1d","interval":"1d","rowSpan":"1n"}]}`

// Bounds on the number of intervals in a row span, OpenTSDB's.
const (
	MinIntervals = 12
	MaxIntervals = 7774
	// MaxIndex is the largest interval index a 3-byte qualifier holds:
	// uint16(index<<4 | flags) has 12 bits for it. OpenTSDB accepts spans
	// of up to MaxIntervals and truncates larger indexes silently; tsd
	// refuses to write them (AppendQualifier).
	MaxIndex = 1<<12 - 1
)

// Seconds per row-span unit, as OpenTSDB bounds them: a month counts 32
// days and a year 366, so every real month and year fits.
const (
	secondsHour  = 3600
	secondsDay   = 86400
	secondsMonth = 32 * secondsDay
	secondsYear  = 366 * secondsDay
)

// knownAggregators are the names OpenTSDB 2.4 registers (Aggregators.java),
// matched after the configured name is lower-cased, as OpenTSDB does (so
// its "squareSum" can never be named in a rollup config).
var knownAggregators = []string{
	"sum", "min", "max", "avg", "none", "median", "mult", "dev", "diff", "count",
	"zimsum", "mimmin", "mimmax", "first", "last", "pfsum", "squareSum",
	"p999", "p99", "p95", "p90", "p75", "p50",
	"ep999r3", "ep99r3", "ep95r3", "ep90r3", "ep75r3", "ep50r3",
	"ep999r7", "ep99r7", "ep95r7", "ep90r7", "ep75r7", "ep50r7",
}

// KnownAggregator reports whether name (lower case) is one of OpenTSDB's
// aggregators.
func KnownAggregator(name string) bool { return slices.Contains(knownAggregators, name) }

// Interval is one configured rollup interval and its tables.
type Interval struct {
	// Table holds the interval's cells ("tsdb-rollup-1h"); for the default
	// interval it is the raw data table.
	Table string
	// PreAggTable holds pre-aggregated series of this interval.
	PreAggTable string
	// Name is the interval as configured ("1h").
	Name string
	// RowSpan is the row span as configured ("1d").
	RowSpan string
	// Default marks the interval of raw data.
	Default bool
	// DelaySLA is the configured maximum lag ("" when not given).
	DelaySLA string

	// Seconds is the interval's length.
	Seconds int64
	// Unit is the row span's unit: 'h', 'd', 'n' (month) or 'y'.
	Unit byte
	// Multiplier is the row span's count of units (only 'h' may exceed 1).
	Multiplier int
	// Count is the bound on intervals per row: the span's seconds (month
	// 32 days, year 366) over Seconds.
	Count int
	// MaxDelay is DelaySLA in seconds (0 when not given).
	MaxDelay int64
}

// Config is a parsed and validated rollup configuration.
type Config struct {
	// Intervals in configuration order.
	Intervals []Interval
	// AggIDs maps lower-case aggregator names to their ids (0..127).
	AggIDs map[string]int
	names  [128]string
}

type jsonInterval struct {
	Table               *string `json:"table"`
	PreAggregationTable *string `json:"preAggregationTable"`
	Interval            *string `json:"interval"`
	RowSpan             *string `json:"rowSpan"`
	DefaultInterval     bool    `json:"defaultInterval"`
	DelaySLA            *string `json:"delaySla,omitempty"`
}

type jsonConfig struct {
	AggregationIDs map[string]json.RawMessage `json:"aggregationIds"`
	Intervals      []json.RawMessage          `json:"intervals"`
}

// ParseConfig parses and validates OpenTSDB's rollup configuration JSON.
// Unknown fields are ignored, as OpenTSDB's parser does. Every error is a
// *ConfigError naming the field.
func ParseConfig(data []byte) (*Config, error) {
	var jc jsonConfig
	if err := json.Unmarshal(data, &jc); err != nil {
		return nil, configErrorf("(document)", "%v", err)
	}
	c := &Config{AggIDs: make(map[string]int, len(jc.AggregationIDs))}
	for i, raw := range jc.Intervals {
		field := "intervals[" + strconv.Itoa(i) + "]"
		var ji jsonInterval
		if err := strictUnmarshal(raw, &ji); err != nil {
			return nil, configErrorf(field, "%v", err)
		}
		iv, err := compileInterval(field, ji)
		if err != nil {
			return nil, err
		}
		c.Intervals = append(c.Intervals, iv)
	}
	for name, raw := range jc.AggregationIDs {
		var id int
		if err := strictUnmarshal(raw, &id); err != nil {
			return nil, configErrorf("aggregationIds."+name, "id %s is not an integer", raw)
		}
		c.AggIDs[strings.ToLower(name)] = id
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func strictUnmarshal(raw json.RawMessage, v any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("null")
	}
	return json.Unmarshal(raw, v)
}

// DefaultConfig returns the parsed DefaultConfigJSON.
func DefaultConfig() *Config {
	c, err := ParseConfig([]byte(DefaultConfigJSON))
	if err != nil {
		panic(err)
	}
	return c
}

// compileInterval checks one interval as RollupInterval.validateAndCompile
// does and fills in its derived fields.
func compileInterval(field string, ji jsonInterval) (Interval, error) {
	iv := Interval{Default: ji.DefaultInterval}
	for _, f := range []struct {
		name string
		src  *string
		dst  *string
	}{{"table", ji.Table, &iv.Table}, {"preAggregationTable", ji.PreAggregationTable, &iv.PreAggTable},
		{"interval", ji.Interval, &iv.Name}, {"rowSpan", ji.RowSpan, &iv.RowSpan}} {
		if f.src == nil || *f.src == "" {
			return iv, configErrorf(field+"."+f.name, "missing or empty")
		}
		*f.dst = *f.src
	}
	if ji.DelaySLA != nil {
		iv.DelaySLA = *ji.DelaySLA
	}
	if err := iv.compileSpan(field + ".rowSpan"); err != nil {
		return iv, err
	}
	sec, err := parseDuration(iv.Name)
	if err != nil || sec < 1 {
		if err == nil {
			err = fmt.Errorf("below one second")
		}
		return iv, configErrorf(field+".interval", "%q: %v", iv.Name, err)
	}
	iv.Seconds = sec
	if iv.DelaySLA != "" {
		d, err := parseDuration(iv.DelaySLA)
		if err != nil || d < 1 {
			if err == nil {
				err = fmt.Errorf("milliseconds are not supported as the maximum delay")
			}
			return iv, configErrorf(field+".delaySla", "%q: %v", iv.DelaySLA, err)
		}
		iv.MaxDelay = d
	}
	span := iv.spanBound()
	if iv.Seconds >= span {
		return iv, configErrorf(field+".interval", "interval [%d] is too large for the span [%s]", iv.Seconds, iv.RowSpan)
	}
	iv.Count = int(span / iv.Seconds)
	if iv.Count > MaxIntervals {
		return iv, configErrorf(field+".interval", "too many intervals [%d] in the span %s, at most %d", iv.Count, iv.RowSpan, MaxIntervals)
	}
	if iv.Count < MinIntervals {
		return iv, configErrorf(field+".interval", "not enough intervals [%d] in the span %s, at least %d", iv.Count, iv.RowSpan, MinIntervals)
	}
	return iv, nil
}

// compileSpan reads RowSpan: <n><unit>, unit h (n 1 or even), d, n or y
// (n 1).
func (iv *Interval) compileSpan(field string) error {
	s := iv.RowSpan
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	unit := strings.ToLower(s[i:])
	n, err := strconv.Atoi(s[:i])
	switch {
	case unit == "ms":
		return configErrorf(field, "%q: milliseconds are not supported", s)
	case err != nil || n <= 0:
		return configErrorf(field, "%q: want a positive integer and a unit", s)
	case len(unit) != 1 || !strings.Contains("hdny", unit):
		return configErrorf(field, "%q: unrecognized span unit %q, want h, d, n or y", s, unit)
	case unit != "h" && n > 1:
		return configErrorf(field, "%q: multipliers are only usable with the 'h' unit", s)
	case unit == "h" && n > 1 && n%2 != 0:
		return configErrorf(field, "%q: the multiplier must be 1 or an even value", s)
	}
	iv.Unit, iv.Multiplier = unit[0], n
	return nil
}

// spanBound is the row span in seconds as OpenTSDB bounds it.
func (iv *Interval) spanBound() int64 {
	switch iv.Unit {
	case 'h':
		return secondsHour * int64(iv.Multiplier)
	case 'd':
		return secondsDay
	case 'n':
		return secondsMonth
	}
	return secondsYear
}

// parseDuration reads OpenTSDB's <n><unit> durations in seconds (ms is
// below one second and reads as 0): s, m, h, d, w, n (30 days), y (365).
func parseDuration(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) {
		return 0, fmt.Errorf("want an integer and a unit")
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("zero, negative or too large")
	}
	var mult int64
	switch strings.ToLower(s[i:]) {
	case "ms":
		return 0, nil
	case "s":
		mult = 1
	case "m":
		mult = 60
	case "h":
		mult = 3600
	case "d":
		mult = 86400
	case "w":
		mult = 7 * 86400
	case "n":
		mult = 30 * 86400
	case "y":
		mult = 365 * 86400
	default:
		return 0, fmt.Errorf("invalid unit %q", s[i:])
	}
	if n > (1<<31-1)/mult {
		return 0, fmt.Errorf("too large")
	}
	return n * mult, nil
}

// Validate checks the configuration as a whole, as RollupConfig's
// constructor does: at least one interval and one aggregator, interval
// names and tables unique, at most one default interval, aggregator ids
// 0..127, unique, naming known aggregators. tsd adds that two intervals
// may not share a table, since their rows would collide.
func (c *Config) Validate() error {
	if len(c.Intervals) == 0 {
		return configErrorf("intervals", "rollup config given but no intervals were found")
	}
	if len(c.AggIDs) == 0 {
		return configErrorf("aggregationIds", "rollup config given but no aggregation ID mappings found")
	}
	defaults := 0
	tables := map[string]int{}
	for i := range c.Intervals {
		iv := &c.Intervals[i]
		field := "intervals[" + strconv.Itoa(i) + "]"
		for j := range i {
			if c.Intervals[j].Name == iv.Name {
				return configErrorf(field+".interval", "only one interval of each type can be configured: %q is also intervals[%d]", iv.Name, j)
			}
		}
		if iv.Default {
			if defaults++; defaults > 1 {
				return configErrorf(field+".defaultInterval", "multiple default intervals configured, only one is allowed")
			}
		}
		for k, t := range map[string]string{"table": iv.Table, "preAggregationTable": iv.PreAggTable} {
			if j, dup := tables[t]; dup {
				return configErrorf(field+"."+k, "table %q is also a table of intervals[%d]", t, j)
			}
			tables[t] = i
		}
	}
	c.names = [128]string{}
	for _, name := range sortedKeys(c.AggIDs) {
		id := c.AggIDs[name]
		field := "aggregationIds." + name
		if id < 0 || id > 127 {
			return configErrorf(field, "ID for aggregator must be between 0 and 127: %d", id)
		}
		if c.names[id] != "" {
			return configErrorf(field, "multiple mappings for the ID '%d' are not allowed (also %s)", id, c.names[id])
		}
		if !KnownAggregator(name) {
			return configErrorf(field, "no such aggregator found for %s", name)
		}
		c.names[id] = name
	}
	return nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ByName returns the interval configured as name ("1h").
func (c *Config) ByName(name string) (*Interval, bool) {
	for i := range c.Intervals {
		if c.Intervals[i].Name == name {
			return &c.Intervals[i], true
		}
	}
	return nil, false
}

// ByTable returns the interval whose table or pre-aggregation table is
// name, and whether name is the pre-aggregation table.
func (c *Config) ByTable(name string) (iv *Interval, preAgg, ok bool) {
	for i := range c.Intervals {
		switch name {
		case c.Intervals[i].Table:
			return &c.Intervals[i], false, true
		case c.Intervals[i].PreAggTable:
			return &c.Intervals[i], true, true
		}
	}
	return nil, false, false
}

// Default returns the default interval (raw data), or nil if none is
// configured.
func (c *Config) Default() *Interval {
	for i := range c.Intervals {
		if c.Intervals[i].Default {
			return &c.Intervals[i]
		}
	}
	return nil
}

// AggID returns the id of aggregator name (case-insensitive).
func (c *Config) AggID(name string) (int, bool) {
	id, ok := c.AggIDs[strings.ToLower(name)]
	return id, ok
}

// AggName returns the aggregator of id, or "" if none is mapped to it.
func (c *Config) AggName(id int) string {
	if id < 0 || id > 127 {
		return ""
	}
	return c.names[id]
}

// IDs returns the ids of the four aggregators tsd computes, -1 where the
// configuration maps none.
func (c *Config) IDs() AggIDs {
	ids := AggIDs{-1, -1, -1, -1}
	for a := range ids {
		if id, ok := c.AggIDs[Agg(a).String()]; ok {
			ids[a] = id
		}
	}
	return ids
}

// Equal reports whether two intervals are configured identically.
func (iv *Interval) Equal(o *Interval) bool {
	return iv.Table == o.Table && iv.PreAggTable == o.PreAggTable && iv.Name == o.Name &&
		iv.RowSpan == o.RowSpan && iv.Default == o.Default && iv.DelaySLA == o.DelaySLA
}

// String is the interval's JSON object, as configured.
func (iv *Interval) String() string {
	b, _ := json.Marshal(iv.jsonForm())
	return string(b)
}

func (iv *Interval) jsonForm() jsonInterval {
	ji := jsonInterval{Table: &iv.Table, PreAggregationTable: &iv.PreAggTable, Interval: &iv.Name,
		RowSpan: &iv.RowSpan, DefaultInterval: iv.Default}
	if iv.DelaySLA != "" {
		ji.DelaySLA = &iv.DelaySLA
	}
	return ji
}

// MarshalJSON writes the configuration in OpenTSDB's form, intervals in
// order and aggregators sorted by name, so a parsed config round-trips.
func (c *Config) MarshalJSON() ([]byte, error) {
	type out struct {
		AggregationIDs map[string]int `json:"aggregationIds"`
		Intervals      []jsonInterval `json:"intervals"`
	}
	o := out{AggregationIDs: c.AggIDs}
	for i := range c.Intervals {
		o.Intervals = append(o.Intervals, c.Intervals[i].jsonForm())
	}
	return json.Marshal(o)
}

// Extends checks that c keeps every interval and aggregator id of old,
// the configuration a store was written with, unchanged: a store's rollup
// tables may gain intervals, never lose or change one. It returns the
// names of the intervals c adds. Errors name the interval or aggregator.
func (c *Config) Extends(old *Config) (added []string, err error) {
	for i := range old.Intervals {
		o := &old.Intervals[i]
		n, ok := c.ByName(o.Name)
		switch {
		case !ok:
			return nil, fmt.Errorf("interval %s is recorded with the store (%s) but not configured: an interval cannot be removed", o.Name, o.String())
		case !n.Equal(o):
			return nil, fmt.Errorf("interval %s is recorded with the store as %s, configured as %s: an interval cannot be changed", o.Name, o.String(), n.String())
		}
	}
	for name, id := range old.AggIDs {
		if nid, ok := c.AggIDs[name]; !ok || nid != id {
			return nil, fmt.Errorf("aggregator %s has id %d in the store's record: ids cannot be changed or removed", name, id)
		}
	}
	for i := range c.Intervals {
		if _, ok := old.ByName(c.Intervals[i].Name); !ok {
			added = append(added, c.Intervals[i].Name)
		}
	}
	return added, nil
}
