package agg

import "time"

// CalendarUnit is the unit of a calendar-aligned downsampling interval.
type CalendarUnit uint8

const (
	// Millisecond buckets.
	Millisecond CalendarUnit = iota + 1
	// Second buckets.
	Second
	// Minute buckets.
	Minute
	// Hour buckets.
	Hour
	// Day buckets, from local midnight.
	Day
	// Week buckets, from Sunday local midnight.
	Week
	// Month buckets, from the first of the month.
	Month
	// Year buckets, from January 1st.
	Year
)

// calendarUnitOf maps OpenTSDB's unit suffix (DateTime.unitsToCalendarType).
func calendarUnitOf(s string) (CalendarUnit, bool) {
	switch s {
	case "ms":
		return Millisecond, true
	case "s":
		return Second, true
	case "m":
		return Minute, true
	case "h":
		return Hour, true
	case "d":
		return Day, true
	case "w":
		return Week, true
	case "n":
		return Month, true
	case "y":
		return Year, true
	}
	return 0, false
}

// suffix returns the unit's OpenTSDB suffix.
func (u CalendarUnit) suffix() string {
	return [...]string{"", "ms", "s", "m", "h", "d", "w", "n", "y"}[u]
}

// fixed returns the unit's length when stepping it is plain arithmetic on
// the instant (Java's Calendar.add of a time field), or 0 when it moves the
// wall clock (days, weeks, months, years).
func (u CalendarUnit) fixed() time.Duration {
	switch u {
	case Millisecond:
		return time.Millisecond
	case Second:
		return time.Second
	case Minute:
		return time.Minute
	case Hour:
		return time.Hour
	}
	return 0
}

// calStep adds n units to t as Java's Calendar.add does: time fields move the
// instant, date fields keep the local wall-clock time.
func calStep(t time.Time, n int, u CalendarUnit) time.Time {
	if d := u.fixed(); d != 0 {
		return t.Add(time.Duration(n) * d)
	}
	switch u {
	case Day:
		return t.AddDate(0, 0, n)
	case Week:
		return t.AddDate(0, 0, 7*n)
	case Month:
		return t.AddDate(0, n, 0)
	}
	return t.AddDate(n, 0, 0)
}

// calBase is where OpenTSDB's DateTime.previousInterval starts counting:
// the enclosing unit when n divides it evenly, a coarser one otherwise.
func calBase(t time.Time, n int, u CalendarUnit) time.Time {
	y, mo, d := t.Date()
	hh, mm, ss := t.Clock()
	loc := t.Location()
	switch u {
	case Millisecond:
		if 1000%n == 0 {
			return time.Date(y, mo, d, hh, mm, ss, 0, loc)
		}
		return time.Date(y, mo, d, hh, mm, 0, 0, loc)
	case Second:
		if 60%n == 0 {
			return time.Date(y, mo, d, hh, mm, 0, 0, loc)
		}
		return time.Date(y, mo, d, hh, 0, 0, 0, loc)
	case Minute:
		if 60%n == 0 {
			return time.Date(y, mo, d, hh, 0, 0, 0, loc)
		}
		return time.Date(y, mo, d, 0, 0, 0, 0, loc)
	case Hour:
		if 24%n == 0 {
			return time.Date(y, mo, d, 0, 0, 0, 0, loc)
		}
		return time.Date(y, mo, 1, 0, 0, 0, 0, loc)
	case Day:
		if n == 1 {
			return time.Date(y, mo, 1, 0, 0, 0, 0, loc)
		}
	}
	return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
}

// calFloor is DateTime.previousInterval: the start of the n-unit calendar
// bucket holding ts (ms) in loc, counted from calBase. Weeks always start on
// the Sunday on or before ts, whatever n (Java steps weeks by 7 days from a
// Sunday, so the base never matters).
func calFloor(ts int64, n int, u CalendarUnit, loc *time.Location) time.Time {
	t := time.UnixMilli(ts).In(loc)
	if u == Week {
		y, mo, d := t.Date()
		return time.Date(y, mo, d-int(t.Weekday()), 0, 0, 0, 0, loc)
	}
	base := calBase(t, n, u)
	if d := u.fixed(); d != 0 {
		step := int64(n) * d.Milliseconds()
		k := (ts - base.UnixMilli()) / step
		return base.Add(time.Duration(k*step) * time.Millisecond)
	}
	if base.UnixMilli() == ts {
		return base
	}
	for !calStep(base, n, u).After(t) {
		base = calStep(base, n, u)
	}
	return base
}
