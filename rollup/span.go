package rollup

import "time"

// BaseTime returns the base time, in seconds, of the row of iv that holds
// second sec: sec snapped down to a multiple of the span for hour spans
// (OpenTSDB's modulo, so a 2h span starts at even hours of the epoch), to
// UTC midnight for d, the first of the UTC month for n and January 1st
// for y (RollupUtils.getRollupBasetime). sec must be >= 0.
func (iv *Interval) BaseTime(sec int64) int64 {
	if iv.Unit == 'h' {
		m := secondsHour * int64(iv.Multiplier)
		return sec - sec%m
	}
	if iv.Unit == 'd' {
		return sec - sec%secondsDay
	}
	t := time.Unix(sec, 0).UTC()
	month := t.Month()
	if iv.Unit == 'y' {
		month = time.January
	}
	return time.Date(t.Year(), month, 1, 0, 0, 0, 0, time.UTC).Unix()
}

// NextBase returns the base time of the row after the one starting at
// base.
func (iv *Interval) NextBase(base int64) int64 {
	switch iv.Unit {
	case 'h':
		return base + secondsHour*int64(iv.Multiplier)
	case 'd':
		return base + secondsDay
	}
	t := time.Unix(base, 0).UTC()
	if iv.Unit == 'n' {
		return t.AddDate(0, 1, 0).Unix()
	}
	return t.AddDate(1, 0, 0).Unix()
}

// Index returns the index, in its row, of the interval holding second sec
// of the row starting at base: (sec - base) / Seconds.
func (iv *Interval) Index(base, sec int64) int { return int((sec - base) / iv.Seconds) }

// CellStart returns the first millisecond of interval idx of the row
// starting at base.
func (iv *Interval) CellStart(base int64, idx int) int64 {
	return (base + int64(idx)*iv.Seconds) * 1000
}

// CellOf returns the base of the row and the index of the interval that
// hold millisecond ms.
func (iv *Interval) CellOf(ms int64) (base int64, idx int) {
	sec := floorDiv(ms, 1000)
	base = iv.BaseTime(sec)
	return base, iv.Index(base, sec)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
