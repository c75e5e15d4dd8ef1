package influx

import (
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/uid"
)

// Defaults of Options.
const (
	DefaultSeparator    = "_"
	DefaultMaxLineBytes = 1 << 20
	DefaultMaxTags      = 32
)

// Options configure a Decoder. The zero value is valid after
// EnsureDefaults.
type Options struct {
	// Separator joins the measurement and the field key into the metric
	// name. Default "_" (an empty value takes the default).
	Separator string
	// MaxLineBytes bounds a line's length; a longer line is bad. Default
	// 1 MiB.
	MaxLineBytes int
	// MaxTags bounds the tags of a line (tsd.storage.max_tags). Default 32.
	MaxTags int
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Separator == "" {
		o.Separator = DefaultSeparator
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxTags == 0 {
		o.MaxTags = DefaultMaxTags
	}
	return o
}

// ErrInvalidOptions is wrapped by every Validate error.
var ErrInvalidOptions = errors.New("influx: invalid options")

// Validate reports the first bad field.
func (o *Options) Validate() error {
	switch {
	case uid.NewValidator(uid.RulesLossless, "").ValidateString(uid.Metric, o.Separator) != nil:
		return fmt.Errorf("%w: separator %q is not printable UTF-8", ErrInvalidOptions, o.Separator)
	case o.MaxLineBytes < 1:
		return fmt.Errorf("%w: max line bytes %d < 1", ErrInvalidOptions, o.MaxLineBytes)
	case o.MaxTags < 1:
		return fmt.Errorf("%w: max tags %d < 1", ErrInvalidOptions, o.MaxTags)
	}
	return nil
}

// Precision is the unit of the timestamps of a request, in nanoseconds.
type Precision int64

// Precisions InfluxDB accepts.
const (
	Nanosecond  Precision = 1
	Microsecond Precision = 1e3
	Millisecond Precision = 1e6
	Second      Precision = 1e9
	Minute      Precision = 60e9
	Hour        Precision = 3600e9
)

// ErrInvalidPrecision is a precision parameter InfluxDB does not know.
var ErrInvalidPrecision = errors.New("invalid precision")

// ParsePrecision parses a precision query parameter: "" (nanoseconds), n,
// ns, u, us, µ, ms, s, m or h (1.x takes n u ms s m h, 2.x ns us ms s).
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "n", "ns":
		return Nanosecond, nil
	case "u", "us", "µ":
		return Microsecond, nil
	case "ms":
		return Millisecond, nil
	case "s":
		return Second, nil
	case "m":
		return Minute, nil
	case "h":
		return Hour, nil
	}
	return 0, fmt.Errorf("%w %q (use n, u, ms, s, m or h)", ErrInvalidPrecision, s)
}

// millis converts a timestamp in precision p to milliseconds; ok is false
// when the result does not fit an int64.
func (p Precision) millis(ts int64) (int64, bool) {
	if p >= Millisecond {
		mul := int64(p / Millisecond)
		if ts > maxInt64/mul || ts < -maxInt64/mul {
			return 0, false
		}
		return ts * mul, true
	}
	return ts / int64(Millisecond/p), true
}

// truncate rounds a millisecond time down to a multiple of p.
func (p Precision) truncate(ms int64) int64 {
	if p <= Millisecond {
		return ms
	}
	unit := int64(p / Millisecond)
	return ms - ms%unit
}

const maxInt64 = 1<<63 - 1
