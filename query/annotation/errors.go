package annotation

import (
	"errors"
	"fmt"
)

// Errors. Their texts are OpenTSDB's messages, so the HTTP layer can show
// them as they are.
var (
	// ErrNotFound: no annotation at that series and start time.
	ErrNotFound = errors.New("Unable to locate annotation in storage")
	// ErrNoStartTime: the start time is missing or below 1.
	ErrNoStartTime = errors.New("The start timestamp has not been set")
	// ErrNoChanges: a Put that sets no field (HTTP answers 304).
	ErrNoChanges = errors.New("No changes detected in Annotation data")
	// ErrNoEndTime: a range without an end time.
	ErrNoEndTime = errors.New("The end timestamp has not been set")
	// ErrEndBeforeStart: a range whose end is before its start.
	ErrEndBeforeStart = errors.New("The end timestamp cannot be less than the start timestamp")
	// ErrConflict: the cell kept changing under Put's check-and-put.
	ErrConflict = errors.New("Failed to save the Annotation to storage")
	// ErrInvalid marks bad input other than the above: a bad TSUID, a time
	// out of range, undecodable JSON.
	ErrInvalid = errors.New("invalid annotation")
)

// invalidf returns an ErrInvalid error whose text is the reason alone.
func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }
