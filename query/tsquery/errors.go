package tsquery

import (
	"errors"

	"github.com/tsd-db/tsd/query/agg"
)

// ErrBadRequest marks every error of this package: the request is refused
// and the HTTP layer answers 400.
var ErrBadRequest = errors.New("bad request")

// Error is a refused query, worded as OpenTSDB words it.
type Error struct {
	// Msg is OpenTSDB's message, the error JSON's "message".
	Msg string
	// Details is the error JSON's "details" (may be empty).
	Details string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns Msg.
func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrBadRequest) hold.
func (e *Error) Is(target error) bool { return target == ErrBadRequest }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func badRequest(msg string) *Error { return &Error{Msg: msg} }

// wrap turns an error of agg or of this package into an *Error, keeping the
// message.
func wrap(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ae *agg.InvalidError
	if errors.As(err, &ae) {
		return &Error{Msg: ae.Msg, Err: err}
	}
	return &Error{Msg: err.Error(), Err: err}
}

// withDetails sets the details of an error returned by wrap.
func withDetails(err error, details string) error {
	e := wrap(err)
	if e.Details == "" {
		e.Details = details
	}
	return e
}
