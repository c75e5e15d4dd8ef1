package promrw

import "encoding/binary"

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// uvarint reads a varint at b[i:]; next is -1 when it is truncated or
// longer than 10 bytes.
func uvarint(b []byte, i int) (v uint64, next int) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1
	}
	for shift := uint(0); shift < 64; shift += 7 {
		if i >= len(b) {
			return 0, -1
		}
		c := b[i]
		i++
		v |= uint64(c&0x7F) << shift
		if c < 0x80 {
			return v, i
		}
	}
	return 0, -1
}

// tag reads a field key; ok is false on a truncated key or field number 0.
func tag(b []byte, i int) (field uint64, wt int, next int, ok bool) {
	k, next := uvarint(b, i)
	if next < 0 || k>>3 == 0 {
		return 0, 0, -1, false
	}
	return k >> 3, int(k & 7), next, true
}

// lenDelim reads a length-delimited field's bounds at b[i:].
func lenDelim(b []byte, i int) (start, end int, ok bool) {
	n, i := uvarint(b, i)
	if i < 0 || n > uint64(len(b)-i) {
		return 0, 0, false
	}
	return i, i + int(n), true
}

// skip returns the index after a field of wire type wt whose value starts
// at b[i:], or -1 when it is truncated or of an unsupported type (groups).
func skip(b []byte, i, wt int) int {
	switch wt {
	case wireVarint:
		_, i = uvarint(b, i)
		return i
	case wireFixed64:
		if len(b)-i < 8 {
			return -1
		}
		return i + 8
	case wireFixed32:
		if len(b)-i < 4 {
			return -1
		}
		return i + 4
	case wireBytes:
		_, end, ok := lenDelim(b, i)
		if !ok {
			return -1
		}
		return end
	}
	return -1
}

// fixed64 reads a little-endian 8-byte value; next is -1 when truncated.
func fixed64(b []byte, i int) (uint64, int) {
	if len(b)-i < 8 {
		return 0, -1
	}
	return binary.LittleEndian.Uint64(b[i:]), i + 8
}
