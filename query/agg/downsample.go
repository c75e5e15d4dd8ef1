package agg

import (
	"strconv"
	"strings"
	"time"
)

// FillPolicy says what a filling downsampler emits for an empty bucket.
type FillPolicy uint8

const (
	// FillNone emits nothing; the group-by interpolates across the gap.
	FillNone FillPolicy = iota
	// FillNaN emits NaN (serialised as "NaN").
	FillNaN
	// FillNull emits NaN (serialised as null).
	FillNull
	// FillZero emits 0.
	FillZero
	// FillScalar emits Downsample.FillValue.
	FillScalar
)

var fillNames = [...]string{"none", "nan", "null", "zero", "scalar"}

// String returns the policy's name in a downsample specifier.
func (p FillPolicy) String() string {
	if int(p) < len(fillNames) {
		return fillNames[p]
	}
	return "unknown"
}

// ParseFillPolicy parses a policy name, ignoring case (FillPolicy.fromString).
func ParseFillPolicy(s string) (FillPolicy, error) {
	for i, n := range fillNames {
		if strings.EqualFold(n, s) {
			return FillPolicy(i), nil
		}
	}
	return 0, invalid("Unrecognized fill policy: " + s)
}

// Downsample is a parsed downsampling specifier
// <n><unit>[c]-<agg>[-<fill>] (OpenTSDB's DownsamplingSpecification).
type Downsample struct {
	// Interval is the bucket width in ms; 0 with All.
	Interval int64
	// All makes one bucket of the whole query range, stamped with its start
	// (any interval containing "all", e.g. 0all).
	All bool
	// Calendar aligns buckets to calendar boundaries in Location instead of
	// ts - ts%Interval (a trailing c, or the query's useCalendar).
	Calendar bool
	// CalendarN and CalendarUnit are the interval as calendar units.
	CalendarN    int
	CalendarUnit CalendarUnit
	// Agg aggregates each bucket; never "none".
	Agg *Aggregator
	// Fill is the policy for empty buckets; FillNone by default.
	Fill FillPolicy
	// FillValue is what FillScalar emits; 0 by default.
	FillValue float64
	// Location is the calendar's time zone; nil means UTC.
	Location *time.Location

	text   string // the interval as given, without the calendar c
	calErr error  // why the interval cannot be read as calendar units
}

// ParseDownsample parses a downsampling specifier with OpenTSDB's rules and
// messages: the parts split on '-', an interval (see ParseDuration; "all"
// anywhere in it means one bucket; a trailing 'c' means calendar
// alignment), a registered aggregator other than none, and an optional fill
// policy.
func ParseDownsample(spec string) (Downsample, error) {
	parts := javaSplit(spec, '-')
	switch {
	case len(parts) < 2:
		return Downsample{}, invalid("Invalid downsampling specifier '" + spec +
			"': must provide at least interval and function")
	case len(parts) > 3:
		return Downsample{}, invalid("Invalid downsampling specifier '" + spec +
			"': must consist of interval, function, and optional fill policy")
	}
	var d Downsample
	if err := d.parseInterval(spec, parts[0]); err != nil {
		return Downsample{}, err
	}
	if err := d.parseFunction(parts[1]); err != nil {
		return Downsample{}, err
	}
	if len(parts) == 3 {
		fill, err := ParseFillPolicy(parts[2])
		if err != nil {
			return Downsample{}, err
		}
		d.Fill = fill
	}
	return d, nil
}

func (d *Downsample) parseInterval(spec, s string) error {
	if strings.Contains(s, "all") {
		d.All, d.text = true, s
		return nil
	}
	if strings.HasSuffix(s, "c") {
		s = s[:len(s)-1]
		d.Calendar = true
	}
	d.text = s
	ms, err := ParseDuration(s)
	if err != nil {
		return err
	}
	d.Interval = ms
	d.CalendarN, d.CalendarUnit, d.calErr = calendarInterval(spec, s)
	if d.Calendar {
		return d.calErr
	}
	return nil
}

// calendarInterval reads "<n><unit>" as Java's Downsampler does for calendar
// alignment: Integer.parseInt of everything before the unit suffix.
func calendarInterval(spec, s string) (int, CalendarUnit, error) {
	cut := 1
	if strings.Contains(strings.ToLower(s), "ms") {
		cut = 2
	}
	if len(s) <= cut {
		return 0, 0, invalid("Invalid downsampling specifier '" + spec + "': bad calendar interval " + s)
	}
	u, ok := calendarUnitOf(strings.ToLower(s[len(s)-cut:]))
	n, err := strconv.ParseInt(s[:len(s)-cut], 10, 32)
	if !ok || err != nil || n < 1 {
		return 0, 0, invalid("Invalid downsampling specifier '" + spec +
			"': For input string: \"" + s[:len(s)-cut] + "\"")
	}
	return int(n), u, nil
}

func (d *Downsample) parseFunction(name string) error {
	a, ok := Lookup(name)
	if !ok {
		return invalid("No such downsampling function: " + name)
	}
	if a.IsNone() {
		return invalid("cannot use the NONE aggregator for downsampling")
	}
	d.Agg = a
	return nil
}

// SetCalendar turns calendar alignment on, as a query's useCalendar does;
// it fails when the interval is not a whole number of calendar units.
func (d *Downsample) SetCalendar() error {
	if d.All {
		return nil
	}
	if d.calErr != nil {
		return d.calErr
	}
	d.Calendar = true
	return nil
}

// String returns a specifier that parses back to d: the interval as given
// (or in milliseconds when d was built by hand), a trailing c when
// calendar-aligned, the aggregator and a fill policy other than none.
func (d Downsample) String() string {
	var b strings.Builder
	switch {
	case d.text != "":
		b.WriteString(d.text)
	case d.All:
		b.WriteString("0all")
	case d.Calendar:
		b.WriteString(strconv.Itoa(d.CalendarN))
		b.WriteString(d.CalendarUnit.suffix())
	default:
		b.WriteString(strconv.FormatInt(d.Interval, 10))
		b.WriteString("ms")
	}
	if d.Calendar && !d.All {
		b.WriteByte('c')
	}
	b.WriteByte('-')
	if d.Agg != nil {
		b.WriteString(d.Agg.Name())
	}
	if d.Fill != FillNone {
		b.WriteByte('-')
		b.WriteString(d.Fill.String())
	}
	return b.String()
}

// loc returns the calendar's location, UTC by default.
func (d *Downsample) loc() *time.Location {
	if d.Location == nil {
		return time.UTC
	}
	return d.Location
}

// javaSplit is Java's String.split on a single character: trailing empty
// strings are removed, so "1m-avg-" has two parts and "" has one.
func javaSplit(s string, sep byte) []string {
	parts := strings.Split(s, string(sep))
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 && s == "" {
		return []string{""}
	}
	return parts
}
