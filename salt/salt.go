package salt

import (
	"errors"
	"fmt"
)

const (
	// DefaultWidth is tsd's salt width in bytes for new tables.
	DefaultWidth = 1
	// DefaultBuckets is the number of salt buckets for new tables (OpenTSDB's
	// default too).
	DefaultBuckets = 20
	// MaxWidth is the widest salt OpenTSDB allows.
	MaxWidth = 8
)

// ErrInvalid marks a width or bucket count OpenTSDB would refuse.
var ErrInvalid = errors.New("salt: invalid settings")

// Salt is a table's salt setting. The zero value is width 0: no salt.
type Salt struct {
	width   int
	buckets int32
}

// New returns the salt of width bytes (0..8) and buckets buckets (>= 1).
// Width 0 disables salting; buckets is then still checked, as OpenTSDB does.
func New(width, buckets int) (Salt, error) {
	if width < 0 || width > MaxWidth {
		return Salt{}, fmt.Errorf("%w: width %d not in 0..%d", ErrInvalid, width, MaxWidth)
	}
	if buckets < 1 || int64(buckets) > 1<<31-1 {
		return Salt{}, fmt.Errorf("%w: buckets %d not in 1..2147483647", ErrInvalid, buckets)
	}
	return Salt{width: width, buckets: int32(buckets)}, nil
}

// Default returns width 1 with 20 buckets.
func Default() Salt { return Salt{width: DefaultWidth, buckets: DefaultBuckets} }

// None returns the disabled salt (width 0), as OpenTSDB's default.
func None() Salt { return Salt{buckets: DefaultBuckets} }

// Width returns the salt width in bytes.
func (s Salt) Width() int { return s.width }

// Buckets returns the number of buckets (1 when unset).
func (s Salt) Buckets() int {
	if s.buckets < 1 {
		return 1
	}
	return int(s.buckets)
}

// Enabled reports whether keys carry salt bytes.
func (s Salt) Enabled() bool { return s.width > 0 }

// String formats the setting as width/buckets.
func (s Salt) String() string { return fmt.Sprintf("width=%d buckets=%d", s.width, s.Buckets()) }

// HashInit is the initial value of Java's Arrays.hashCode.
const HashInit int32 = 1

// Hash continues Java's Arrays.hashCode over b from h, so a hash over the
// metric UID and then the tag bytes needs no concatenation.
func Hash(h int32, b []byte) int32 {
	// Four bytes per step shorten the multiply chain; int32 wrap-around
	// makes the regrouping exact.
	for ; len(b) >= 4; b = b[4:] {
		h = 31*31*31*31*h + 31*31*31*int32(int8(b[0])) + 31*31*int32(int8(b[1])) +
			31*int32(int8(b[2])) + int32(int8(b[3]))
	}
	for _, c := range b {
		h = 31*h + int32(int8(c))
	}
	return h
}

// BucketOf maps a hash to its bucket with Java's remainder and sign flip.
func (s Salt) BucketOf(h int32) int {
	m := h % int32(s.Buckets())
	if m < 0 {
		m = -m
	}
	return int(m)
}

// Bucket returns the bucket of a series from its metric UID followed by its
// tag bytes (a TSUID).
func (s Salt) Bucket(tsuid []byte) int { return s.BucketOf(Hash(HashInit, tsuid)) }

// AppendBucket appends the Width salt bytes of bucket to dst.
func (s Salt) AppendBucket(dst []byte, bucket int) []byte {
	for i := s.width - 1; i >= 0; i-- {
		dst = append(dst, byte(uint32(bucket)>>(uint(8*i)&31)))
	}
	return dst
}

// PutBucket writes the Width salt bytes of bucket into dst[:Width].
func (s Salt) PutBucket(dst []byte, bucket int) {
	_ = dst[:s.width]
	for i := 0; i < s.width; i++ {
		dst[s.width-1-i] = byte(uint32(bucket) >> (uint(8*i) & 31))
	}
}

// Append appends the salt bytes of the series whose TSUID (metric UID and
// tag bytes) is tsuid. An all-zero metric (OpenTSDB's global annotation row)
// gets zero salt bytes; metricWidth says how many leading bytes are the
// metric.
func (s Salt) Append(dst, tsuid []byte, metricWidth int) []byte {
	if s.width == 0 {
		return dst
	}
	if isZero(tsuid[:min(metricWidth, len(tsuid))]) {
		return s.AppendBucket(dst, 0)
	}
	return s.AppendBucket(dst, s.Bucket(tsuid))
}

// Decode reads a bucket number back from salt bytes. Widths above 4 hold
// the bucket in their last four bytes.
func Decode(b []byte) int {
	var v uint32
	for _, c := range b[max(0, len(b)-4):] {
		v = v<<8 | uint32(c)
	}
	return int(int32(v))
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
