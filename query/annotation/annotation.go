package annotation

import (
	"strconv"

	"github.com/tsd-db/tsd/rowkey"
)

// Fields is a set of an annotation's mutable fields, the ones a request
// may change.
type Fields uint8

// The mutable fields.
const (
	FieldEndTime Fields = 1 << iota
	FieldDescription
	FieldNotes
	FieldCustom
)

// Annotation is one note, with OpenTSDB's fields.
type Annotation struct {
	// TSUID is the series' TSUID in hex as given; empty for a global note.
	TSUID string
	// StartTime is required (>= 1): seconds, or ms when above 32 bits.
	StartTime int64
	// EndTime is optional (0): seconds or ms, like StartTime.
	EndTime int64
	// Description is a short line shown in GUIs.
	Description string
	// Notes is the long text.
	Notes string
	// Custom holds user key/values; nil is JSON null.
	Custom map[string]string
	// Given lists the fields a request set to a value other than the
	// default, as OpenTSDB's setters mark them changed; Put keeps the
	// stored value of the others unless it overwrites.
	Given Fields
}

// IsMs reports whether t is in milliseconds by OpenTSDB's rule: any of
// the upper 32 bits set.
func IsMs(t int64) bool { return uint64(t)>>32 != 0 }

// ToMs converts a start or end time in seconds or ms to ms.
func ToMs(t int64) int64 {
	if IsMs(t) {
		return t
	}
	return t * 1000
}

// StartMs returns the start time in milliseconds.
func (a *Annotation) StartMs() int64 { return ToMs(a.StartTime) }

// String is OpenTSDB's toString, used in error details.
func (a *Annotation) String() string {
	return "TSUID: " + a.TSUID + " Start: " + strconv.FormatInt(a.StartTime, 10) +
		"  Description: " + a.Description
}

// merge fills the fields a did not set from stored, as OpenTSDB's syncNote
// does; with overwrite only the start time is taken.
func (a *Annotation) merge(stored *Annotation, overwrite bool) {
	if stored.StartTime > 0 && (stored.StartTime < a.StartTime || a.StartTime == 0) {
		a.StartTime = stored.StartTime
	}
	if overwrite {
		return
	}
	if a.Given&FieldEndTime == 0 {
		a.EndTime = stored.EndTime
	}
	if a.Given&FieldDescription == 0 {
		a.Description = stored.Description
	}
	if a.Given&FieldNotes == 0 {
		a.Notes = stored.Notes
	}
	if a.Given&FieldCustom == 0 {
		a.Custom = stored.Custom
	}
}

// checkTime validates a start time and returns it in ms.
func checkStart(t int64) (int64, error) {
	if t < 1 {
		return 0, ErrNoStartTime
	}
	ms := ToMs(t)
	if ms > rowkey.MaxTimestamp {
		return 0, invalidf("start time %d is past the last storable time", t)
	}
	return ms, nil
}
