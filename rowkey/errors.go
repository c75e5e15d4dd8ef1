package rowkey

import (
	"encoding/hex"
	"errors"
	"fmt"
)

var (
	// ErrInvalid marks arguments an encoder refuses: a UID of the wrong
	// width, a timestamp outside its row, unsorted points.
	ErrInvalid = errors.New("invalid argument")
	// ErrTooManyTags marks a series with more tags than Layout.MaxTags.
	ErrTooManyTags = errors.New("too many tags")
	// ErrCorrupt marks stored bytes that do not decode: a bad row key,
	// qualifier or value.
	ErrCorrupt = errors.New("corrupt")
)

// CellError names the column whose cell did not decode. Row decoders
// return one per bad cell and still decode the others.
type CellError struct {
	// Qualifier is a copy of the cell's qualifier.
	Qualifier []byte
	// Err is the decoding error; it wraps ErrCorrupt.
	Err error
}

// Error implements error.
func (e *CellError) Error() string {
	return fmt.Sprintf("cell qualifier %s: %v", hex.EncodeToString(e.Qualifier), e.Err)
}

// Unwrap returns the decoding error.
func (e *CellError) Unwrap() error { return e.Err }

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func wrapf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}
