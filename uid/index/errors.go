package index

import (
	"errors"
	"fmt"
)

// Error classes; test with errors.Is.
var (
	// ErrBadTSUID: a TSUID does not fit the UID widths, has tags out of
	// order or a zero metric UID.
	ErrBadTSUID = errors.New("index: bad tsuid")
	// ErrBadFilter: a filter has an unknown type, a bad pattern or a
	// wildcard without an asterisk.
	ErrBadFilter = errors.New("index: bad filter")
	// ErrExhausted: every series id (uint32) is taken.
	ErrExhausted = errors.New("index: series ids exhausted")
	// ErrClosed: the Index was closed.
	ErrClosed = errors.New("index: closed")
)

// FilterError names the filter a query gave that cannot be used.
type FilterError struct {
	// Index is the filter's position in the list given.
	Index int
	// Filter is its text (type and pattern).
	Filter string
	// Reason says what is wrong.
	Reason string
}

// Error names the filter and the reason.
func (e *FilterError) Error() string {
	return fmt.Sprintf("index: filter %d %s: %s", e.Index, e.Filter, e.Reason)
}

// Is makes errors.Is(err, ErrBadFilter) hold.
func (e *FilterError) Is(target error) bool { return target == ErrBadFilter }
