package tsquery

import (
	"errors"
	"testing"
	"time"
)

const now = int64(1700000000000)

func TestParseTime(t *testing.T) {
	denver, err := time.LoadLocation("America/Denver")
	if err != nil {
		t.Fatal(err)
	}
	utcDate := func(y int, mo time.Month, d, h, m, s int) int64 {
		return time.Date(y, mo, d, h, m, s, 0, time.UTC).UnixMilli()
	}
	for _, tc := range []struct {
		in, tz string
		want   int64
	}{
		{"now", "", now},
		{"NoW", "", now},
		{"1h-ago", "", now - 3600000},
		{"15m-AGO", "", now - 900000},
		{"2d-ago", "", now - 2*86400000},
		{"1700000000", "", 1700000000000},
		{"1700000000000", "", 1700000000000},
		{"17", "", 17000},
		{"+5", "", 5000},
		{"0", "", 0},
		{"1700000000.123", "", 1700000000123},
		{"1700000000.5", "", 1700000000500},
		{"1700000000.05", "", 1700000000050},
		{"500ms", "", 500},
		{"2024/06/19", "", utcDate(2024, 6, 19, 0, 0, 0)},
		{"2024/06/19-12:30", "", utcDate(2024, 6, 19, 12, 30, 0)},
		{"2024/06/19 12:30", "", utcDate(2024, 6, 19, 12, 30, 0)},
		{"2024/06/19-12:30:15", "", utcDate(2024, 6, 19, 12, 30, 15)},
		{"2024/06/19 12:30:15", "", utcDate(2024, 6, 19, 12, 30, 15)},
		{"2024/06/19 12:30", "America/Denver", time.Date(2024, 6, 19, 12, 30, 0, 0, denver).UnixMilli()},
		{"2024/13/01", "", utcDate(2025, 1, 1, 0, 0, 0)}, // lenient, like SimpleDateFormat
		{"2024/06/1x", "", utcDate(2024, 6, 1, 0, 0, 0)}, // trailing text ignored
		{"", "", -1},
	} {
		got, err := ParseTime(tc.in, tc.tz, now, nil)
		if err != nil || got != tc.want {
			t.Errorf("ParseTime(%q, %q) = %d, %v; want %d", tc.in, tc.tz, got, err, tc.want)
		}
	}
	if got, _ := ParseTime("2024/06/19", "", now, denver); got != time.Date(2024, 6, 19, 0, 0, 0, 0, denver).UnixMilli() {
		t.Errorf("default location ignored: %d", got)
	}
}

func TestParseTimeErrors(t *testing.T) {
	for _, tc := range []struct{ in, tz, msg string }{
		{"-5", "", "Invalid time: -5. Negative timestamps are not supported."},
		{"abc", "", "Invalid time: abc. Invalid character 'a' in abc"},
		{"2024-06-19", "", "Invalid time: 2024-06-19. Invalid character '-' in 2024-06-19"},
		{"-", "", "Invalid time: -. Just a sign, no value: -"},
		{"12345678901234567890", "", "Invalid time: 12345678901234567890. Value too long: 12345678901234567890"},
		{"9999999999999999999", "", "Invalid time: 9999999999999999999. Overflow in 9999999999999999999"},
		{"99999999999999999999ms", "", "Invalid time: 99999999999999999999ms. Value too long: 99999999999999999999"},
		{"1700000000.1234", "", "Invalid time: 1700000000.1234. Millisecond timestamps must be in the format <seconds>.<ms> where the milliseconds are limited to 3 digits"},
		{"1.5", "", "Invalid time: 1.5. Millisecond timestamps must be in the format <seconds>.<ms> where the milliseconds are limited to 3 digits"},
		{"2024/06", "", "Invalid absolute date: 2024/06"},
		{"2024/06/19", "Mars/Olympus", "Invalid timezone name: Mars/Olympus"},
		{"2024/06/19", "Local", "Invalid timezone name: Local"},
		{"aaaa/bb/cc", "", "Invalid date: aaaa/bb/cc. Unparseable date: \"aaaa/bb/cc\""},
		{"2024/06/19T12:30", "", "Invalid date: 2024/06/19T12:30. Unparseable date: \"2024/06/19T12:30\""},
		{"1x-ago", "", "Invalid duration (suffix): 1x"},
		{"-ago", "", "Invalid duration, must have an integer and unit: "},
	} {
		_, err := ParseTime(tc.in, tc.tz, now, nil)
		if err == nil || err.Error() != tc.msg || !errors.Is(err, ErrBadRequest) {
			t.Errorf("ParseTime(%q, %q) error %v, want %q", tc.in, tc.tz, err, tc.msg)
		}
	}
}
