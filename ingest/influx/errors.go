package influx

import (
	"strconv"
)

// MaxErrorText bounds how much of a bad line a LineError quotes.
const MaxErrorText = 1024

// Reasons a line is bad, in InfluxDB's words (models/points.go).
const (
	reasonMissingMeasurement = "missing measurement"
	reasonMissingFields      = "missing fields"
	reasonMissingTagKey      = "missing tag key"
	reasonMissingTagValue    = "missing tag value"
	reasonInvalidTagFormat   = "invalid tag format"
	reasonDuplicateTags      = "duplicate tags"
	reasonMissingFieldKey    = "missing field key"
	reasonMissingFieldValue  = "missing field value"
	reasonInvalidFieldFormat = "invalid field format"
	reasonUnbalancedQuotes   = "unbalanced quotes"
	reasonInvalidNumber      = "invalid number"
	reasonInvalidFloat       = "invalid float"
	reasonInvalidBoolean     = "invalid boolean"
	reasonBadTimestamp       = "bad timestamp"
	reasonTimeRange          = "time outside range"
	reasonBefore1970         = "bad timestamp: before 1970-01-01, which tsd does not store"
	reasonInvalidPoint       = "point is invalid"
	reasonNotFinite          = "invalid float: NaN and infinities are not supported"
)

// openQuote is the internal reason for a line that ends inside a string
// field: the Decoder extends it with the next line before giving up.
const openQuote = "\x00open quote"

// LineError is a bad line: its number (from 1), its text (at most
// MaxErrorText bytes) and what is wrong. Text aliases the Decoder's input
// and is valid until the next Next; Clone keeps it.
type LineError struct {
	Line      int
	Text      []byte
	Truncated bool // Text is the first MaxErrorText bytes of a longer line
	Reason    string
}

// Error returns InfluxDB's form plus the line number:
// "unable to parse 'cpu,host=a usage=': missing field value (line 3)".
func (e *LineError) Error() string {
	b := make([]byte, 0, len(e.Text)+len(e.Reason)+40)
	b = append(b, "unable to parse '"...)
	b = append(b, e.Text...)
	if e.Truncated {
		b = append(b, "..."...)
	}
	b = append(b, "': "...)
	b = append(b, e.Reason...)
	b = append(b, " (line "...)
	b = strconv.AppendInt(b, int64(e.Line), 10)
	return string(append(b, ')'))
}

// Clone returns a copy that owns its text.
func (e *LineError) Clone() *LineError {
	c := *e
	c.Text = append([]byte(nil), e.Text...)
	return &c
}
