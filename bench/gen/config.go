package gen

import (
	"errors"
	"fmt"
	"time"
)

// DefaultStart is the dataset's fixed first timestamp, 2026-01-01T00:00:00Z.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxHosts bounds Config.Hosts (the high-cardinality shape's 1 M series).
const MaxHosts = 1_000_000

// ValueMode selects how values are drawn.
type ValueMode uint8

const (
	// ValuesInt draws integer percentages 0..100.
	ValuesInt ValueMode = iota
	// ValuesFloat draws two-decimal percentages 0.00..100.00.
	ValuesFloat
)

// String returns "int" or "float".
func (m ValueMode) String() string {
	if m == ValuesFloat {
		return "float"
	}
	return "int"
}

// ParseValueMode parses "int" or "float".
func ParseValueMode(s string) (ValueMode, error) {
	switch s {
	case "int":
		return ValuesInt, nil
	case "float":
		return ValuesFloat, nil
	}
	return 0, fmt.Errorf("gen: unknown value mode %q (want int or float)", s)
}

// Shape selects the metrics of the dataset.
type Shape uint8

const (
	// ShapeDevops is ten cpu gauges per host.
	ShapeDevops Shape = iota
	// ShapeHighCard is one metric, cpu_usage_user, on many hosts.
	ShapeHighCard
	// ShapeCounters is ten network counters per host, with resets.
	ShapeCounters
)

// String returns "devops", "highcard" or "counters".
func (s Shape) String() string {
	switch s {
	case ShapeHighCard:
		return "highcard"
	case ShapeCounters:
		return "counters"
	}
	return "devops"
}

// ParseShape parses "devops", "highcard" or "counters".
func ParseShape(s string) (Shape, error) {
	switch s {
	case "devops":
		return ShapeDevops, nil
	case "highcard":
		return ShapeHighCard, nil
	case "counters":
		return ShapeCounters, nil
	}
	return 0, fmt.Errorf("gen: unknown shape %q (want devops, highcard or counters)", s)
}

// Config describes a dataset. The zero value is the pinned default dataset.
type Config struct {
	// Hosts is the number of hosts (series per metric). Default 100; at most
	// MaxHosts.
	Hosts int
	// Start is the first timestamp. Default DefaultStart.
	Start time.Time
	// Span is the covered duration; points lie in [Start, Start+Span).
	// Default 24 h.
	Span time.Duration
	// Interval is the step between two points of a series, a whole number of
	// milliseconds. Default 10 s.
	Interval time.Duration
	// Seed seeds every stream. Default 1 (0 means 1).
	Seed uint64
	// Values is the value mode. Default ValuesInt.
	Values ValueMode
	// Shape is the metric set. Default ShapeDevops.
	Shape Shape
}

// EnsureDefaults fills zero fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.Hosts == 0 {
		c.Hosts = 100
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	if c.Span == 0 {
		c.Span = 24 * time.Hour
	}
	if c.Interval == 0 {
		c.Interval = 10 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// ErrInvalidConfig is wrapped by every Validate error.
var ErrInvalidConfig = errors.New("gen: invalid config")

// Validate reports the first field out of range.
func (c *Config) Validate() error {
	switch {
	case c.Hosts < 1 || c.Hosts > MaxHosts:
		return fmt.Errorf("%w: hosts %d not in 1..%d", ErrInvalidConfig, c.Hosts, MaxHosts)
	case c.Interval <= 0 || c.Interval%time.Millisecond != 0:
		return fmt.Errorf("%w: interval %v is not a positive whole number of milliseconds", ErrInvalidConfig, c.Interval)
	case c.Span < c.Interval:
		return fmt.Errorf("%w: span %v shorter than interval %v", ErrInvalidConfig, c.Span, c.Interval)
	case c.Start.UnixMilli() < 0:
		return fmt.Errorf("%w: start %v before 1970", ErrInvalidConfig, c.Start)
	case c.Values > ValuesFloat:
		return fmt.Errorf("%w: value mode %d", ErrInvalidConfig, c.Values)
	case c.Shape > ShapeCounters:
		return fmt.Errorf("%w: shape %d", ErrInvalidConfig, c.Shape)
	}
	return nil
}

// Steps returns the number of timestamps per series.
func (c *Config) Steps() int {
	return int((c.Span + c.Interval - 1) / c.Interval)
}
