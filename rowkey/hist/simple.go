package hist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// MinEncodedBytes is the shortest stored value OpenTSDB decodes.
const MinEncodedBytes = 6

// MaxBuckets bounds the buckets of one histogram: the count is a Java
// short, so OpenTSDB cannot store more either.
const MaxBuckets = math.MaxInt16

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("hist: corrupt histogram")

// Bucket is one regular bucket's bounds and count.
type Bucket struct {
	Lo, Hi float32
	Count  int64
}

// Histogram is a simple bucketed histogram: OpenTSDB's SimpleHistogram.
// The zero value is an empty histogram of codec 0.
type Histogram struct {
	// ID is the codec id written before the bytes of a stored value.
	ID uint8
	// Buckets are sorted by (Lo, Hi) in Java's Float.compare order, one
	// per bound pair.
	Buckets   []Bucket
	Underflow int64
	Overflow  int64
}

// Reset empties h, keeping its bucket memory.
func (h *Histogram) Reset(id uint8) {
	h.ID, h.Buckets, h.Underflow, h.Overflow = id, h.Buckets[:0], 0, 0
}

// Clone returns a deep copy of h.
func (h *Histogram) Clone() Histogram {
	c := *h
	c.Buckets = slices.Clone(h.Buckets)
	return c
}

// javaFloatCompare is Java's Float.compare: -0 below +0, NaN above
// everything and equal to itself.
func javaFloatCompare(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := javaFloatBits(a), javaFloatBits(b)
	switch {
	case ab == bb:
		return 0
	case ab < bb:
		return -1
	}
	return 1
}

// javaFloatBits is Float.floatToIntBits: every NaN is 0x7fc00000.
func javaFloatBits(f float32) int32 {
	if f != f {
		return 0x7fc00000
	}
	return int32(math.Float32bits(f))
}

func cmpBounds(b Bucket, lo, hi float32) int {
	if c := javaFloatCompare(b.Lo, lo); c != 0 {
		return c
	}
	return javaFloatCompare(b.Hi, hi)
}

// Set puts the count of bucket [lo, hi], replacing an equal bucket's
// (a TreeMap put).
func (h *Histogram) Set(lo, hi float32, n int64) {
	i, found := slices.BinarySearchFunc(h.Buckets, Bucket{Lo: lo, Hi: hi}, func(b, t Bucket) int { return cmpBounds(b, t.Lo, t.Hi) })
	if found {
		h.Buckets[i].Count = n
		return
	}
	h.Buckets = slices.Insert(h.Buckets, i, Bucket{Lo: lo, Hi: hi, Count: n})
}

// Count returns the count of bucket [lo, hi], 0 when absent.
func (h *Histogram) Count(lo, hi float32) int64 {
	i, found := slices.BinarySearchFunc(h.Buckets, Bucket{Lo: lo, Hi: hi}, func(b, t Bucket) int { return cmpBounds(b, t.Lo, t.Hi) })
	if !found {
		return 0
	}
	return h.Buckets[i].Count
}

// Add adds o into h bucket by bucket, as SimpleHistogram.aggregate with
// SUM does: a bucket of o that h lacks joins h; underflow and overflow
// add up. Counts wrap as Java longs.
func (h *Histogram) Add(o *Histogram) {
	for _, b := range o.Buckets {
		h.Set(b.Lo, b.Hi, h.Count(b.Lo, b.Hi)+b.Count)
	}
	h.Overflow += o.Overflow
	h.Underflow += o.Underflow
}

// Percentile is SimpleHistogram.percentile (see the package doc).
func (h *Histogram) Percentile(p float64) float64 {
	if p < 1.0 || p > 100.0 {
		return -1.0
	}
	var sum int32 // Java's int, each count truncated by intValue()
	for _, b := range h.Buckets {
		sum += int32(b.Count)
	}
	var running int64
	for _, b := range h.Buckets {
		running += int64(int32(b.Count))
		if area := float64(running) * 100.0 / float64(sum); area >= p {
			mid := b.Lo + b.Hi
			mid /= 2
			return float64(mid)
		}
	}
	return 0
}

// AppendEncoded appends h's bytes, led by its codec id when withID.
func (h *Histogram) AppendEncoded(dst []byte, withID bool) []byte {
	if withID {
		dst = append(dst, h.ID)
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(len(h.Buckets))))
	for _, b := range h.Buckets {
		dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(b.Lo))
		dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(b.Hi))
		dst = AppendVarLong(dst, b.Count)
	}
	dst = AppendVarLong(dst, h.Underflow)
	return AppendVarLong(dst, h.Overflow)
}

// Decode reads raw into h (reusing its buckets), skipping the codec id
// byte when withID (the id is kept in h.ID).
func (h *Histogram) Decode(raw []byte, withID bool) error {
	if len(raw) < MinEncodedBytes {
		return fmt.Errorf("%w: Byte array shorter than 6 bytes detected: %s", ErrCorrupt, Pretty(raw))
	}
	h.Reset(0)
	r := reader{b: raw}
	if withID {
		h.ID = r.byte()
	}
	n := int16(r.uint16())
	for i := 0; i < int(n) && r.err == nil; i++ {
		lo, hi := math.Float32frombits(r.uint32()), math.Float32frombits(r.uint32())
		c := r.varLong()
		if r.err == nil {
			h.Set(lo, hi, c)
		}
	}
	h.Underflow = r.varLong()
	h.Overflow = r.varLong()
	if r.err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, r.err)
	}
	return nil
}

// errUnderflow is Kryo's message for a read past the end.
var errUnderflow = errors.New("Buffer underflow.")

// reader reads Kryo's big-endian fixed widths and varints.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errUnderflow
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) uint16() uint16 {
	if b := r.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *reader) uint32() uint32 {
	if b := r.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// varLong is Kryo's readVarLong(true).
func (r *reader) varLong() int64 {
	var v uint64
	for i := 0; i < 9; i++ {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		if i == 8 {
			return int64(v | uint64(b)<<56)
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			break
		}
	}
	return int64(v)
}

// AppendVarLong appends v as Kryo's writeVarLong(v, true): nine bytes
// at most, the ninth holding 8 bits.
func AppendVarLong(dst []byte, v int64) []byte {
	u := uint64(v)
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(dst, byte(u))
		}
		dst = append(dst, byte(u&0x7f)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// Pretty prints bytes as asynchbase's Bytes.pretty does in OpenTSDB's
// messages: quoted, printable ASCII as is, others as \xNN.
func Pretty(b []byte) string {
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(b)+2)
	out = append(out, '"')
	for _, c := range b {
		if c > 31 && c < 127 {
			if c == '"' {
				out = append(out, '\\')
			}
			out = append(out, c)
			continue
		}
		out = append(out, '\\', 'x', hex[c>>4], hex[c&15])
	}
	return string(append(out, '"'))
}
