package rollup

import (
	"errors"
	"fmt"
)

var (
	// ErrConfig marks a rollup configuration that does not validate; the
	// *ConfigError wrapping it names the field.
	ErrConfig = errors.New("invalid rollup config")
	// ErrCorrupt marks stored rollup bytes that do not decode.
	ErrCorrupt = errors.New("corrupt rollup cell")
	// ErrInvalid marks arguments an encoder refuses: an index outside the
	// row, an aggregator id outside 0..127.
	ErrInvalid = errors.New("invalid rollup argument")
)

// ConfigError is a configuration error naming the JSON field it concerns,
// such as "intervals[1].rowSpan" or "aggregationIds.sum".
type ConfigError struct {
	Field string
	Msg   string
}

func (e *ConfigError) Error() string {
	return "rollup config: " + e.Field + ": " + e.Msg
}

func (e *ConfigError) Unwrap() error { return ErrConfig }

func configErrorf(field, format string, args ...any) error {
	return &ConfigError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
