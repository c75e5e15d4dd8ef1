package series

import "math"

// Kind is the stored type of a point's value.
type Kind uint8

const (
	// Int is a signed 64-bit integer.
	Int Kind = iota
	// Float32 is a float exact in single precision, stored on 4 bytes.
	Float32
	// Float64 is a double stored on 8 bytes with its bits kept exactly.
	Float64
)

// StaleNaN is Prometheus's staleness marker, kept bit for bit.
const StaleNaN uint64 = 0x7ff0000000000002

// Point is one timestamped value. Bits holds the int64 two's complement for
// Int, or the float64 bits for Float32 and Float64 (a Float32 is widened
// exactly).
type Point struct {
	// T is milliseconds since the epoch.
	T int64
	// Bits is the raw value; read it through Int and Float.
	Bits uint64
	// Kind is the value's type.
	Kind Kind
	// Ms marks a point on a whole second whose client gave its time in
	// milliseconds on an OpenTSDB path (telnet, /api/put), or that was
	// read from a 4-byte millisecond qualifier: in OpenTSDB's format it
	// is written with the millisecond qualifier, as OpenTSDB decides by
	// the timestamp's upper 32 bits, not by its value. Points off whole
	// seconds always get that qualifier and leave Ms false, as do the
	// other protocols. It fits in the struct's padding.
	Ms bool
}

// IntPoint returns an integer point.
func IntPoint(t, v int64) Point { return Point{T: t, Bits: uint64(v), Kind: Int} }

// Float64Point returns a double point, keeping v's bits.
func Float64Point(t int64, v float64) Point {
	return Point{T: t, Bits: math.Float64bits(v), Kind: Float64}
}

// Float32Point returns a single-precision point.
func Float32Point(t int64, v float32) Point {
	return Point{T: t, Bits: math.Float64bits(float64(v)), Kind: Float32}
}

// IsInt reports whether the value is an integer.
func (p Point) IsInt() bool { return p.Kind == Int }

// Int returns the value as int64 (floats truncate toward zero).
func (p Point) Int() int64 {
	if p.Kind == Int {
		return int64(p.Bits)
	}
	return int64(math.Float64frombits(p.Bits))
}

// Float returns the value as float64.
func (p Point) Float() float64 {
	if p.Kind == Int {
		return float64(int64(p.Bits))
	}
	return math.Float64frombits(p.Bits)
}

// IsStale reports whether the point is Prometheus's staleness marker.
func (p Point) IsStale() bool { return p.Kind == Float64 && p.Bits == StaleNaN }
