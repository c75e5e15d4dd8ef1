package storage

import (
	"errors"
	"fmt"
)

// Error classes. Engines wrap them with context; callers test with errors.Is.
var (
	// ErrNotFound: a table, family or row (for Get, any matching cell) does
	// not exist. An unknown family named in a call is ErrNotFound, and the
	// error names the table and the family.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict: a CheckAndPut found another value than expected.
	ErrConflict = errors.New("storage: check-and-put conflict")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("storage: closed")
	// ErrInvalidArgument: bad input such as an empty row key, a bad table or
	// family name or an invalid regular expression. Retrying cannot help.
	ErrInvalidArgument = errors.New("storage: invalid argument")
	// ErrRetryable: a transient failure (unavailable, timeout, throttled);
	// the same call may succeed later.
	ErrRetryable = errors.New("storage: retryable")
	// ErrCorruption: stored bytes are damaged; see *CorruptionError.
	ErrCorruption = errors.New("storage: corruption")
	// ErrReadOnly: the store refuses writes for now, for a reason the
	// error names (its disk is below the free-space minimum or full);
	// reads still work. It is in the ErrRetryable class: the same write
	// succeeds once the reason is gone.
	ErrReadOnly = errors.New("storage: read-only")
)

// Invalidf returns an ErrInvalidArgument error with a formatted reason.
func Invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// retryableError marks its cause as ErrRetryable while keeping the cause.
type retryableError struct{ err error }

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() []error {
	return []error{e.err, ErrRetryable}
}

// MarkRetryable returns err marked so errors.Is(err, ErrRetryable) holds.
func MarkRetryable(err error) error {
	if err == nil || errors.Is(err, ErrRetryable) {
		return err
	}
	return &retryableError{err: err}
}

// readOnlyError marks its cause as ErrReadOnly and ErrRetryable.
type readOnlyError struct{ err error }

func (e *readOnlyError) Error() string { return "read-only: " + e.err.Error() }
func (e *readOnlyError) Unwrap() []error {
	return []error{e.err, ErrReadOnly, ErrRetryable}
}

// ReadOnly returns a refusal of a write whose reason is cause: its text is
// "read-only: " and the cause's, and errors.Is matches ErrReadOnly,
// ErrRetryable and whatever cause matches.
func ReadOnly(cause error) error { return &readOnlyError{err: cause} }

// IsRetryable reports whether err is in the retryable class.
func IsRetryable(err error) bool { return errors.Is(err, ErrRetryable) }

// CorruptionError names damaged data. errors.Is(err, ErrCorruption) holds.
type CorruptionError struct {
	Table     string
	Row       []byte
	Qualifier []byte
	Err       error
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("storage: corruption in table %q row %x qualifier %x: %v",
		e.Table, e.Row, e.Qualifier, e.Err)
}

// Unwrap returns the cause and ErrCorruption.
func (e *CorruptionError) Unwrap() []error { return []error{e.Err, ErrCorruption} }

// DamagedRangeError is a read that met stored bytes the engine cannot read
// back (a damaged file): rows of Table in [From, To) may be unreadable, a
// nil From or To meaning the table's start or end; rows outside are
// readable. A reader that can do without those rows reads on from To.
// errors.Is(err, ErrCorruption) holds.
type DamagedRangeError struct {
	Table    string
	From, To []byte
	Err      error
}

func (e *DamagedRangeError) Error() string {
	return fmt.Sprintf("storage: table %q rows %s to %s unreadable: %v", e.Table, rowBound(e.From, "its start"),
		rowBound(e.To, "its end"), e.Err)
}

// Unwrap returns the cause and ErrCorruption.
func (e *DamagedRangeError) Unwrap() []error { return []error{e.Err, ErrCorruption} }

func rowBound(row []byte, edge string) string {
	if row == nil {
		return edge
	}
	return fmt.Sprintf("%x", row)
}
