package head

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// slack is the capacity a bitWriter keeps past its last byte, so that a
// bitReader can load eight bytes at any position in the stream without a
// bounds check or a copy.
const slack = 8

// bitWriter appends bits, most significant first, to a byte slice whose
// capacity always has slack bytes to spare.
type bitWriter struct {
	b    []byte
	free uint8 // unused low bits of the last byte
}

// reset empties the writer and keeps its capacity.
func (w *bitWriter) reset() { w.b, w.free = w.b[:0], 0 }

// writeBit appends one bit.
func (w *bitWriter) writeBit(bit bool) {
	if w.free == 0 {
		w.newByte()
	}
	w.free--
	if bit {
		w.b[len(w.b)-1] |= 1 << w.free
	}
}

// newByte appends a zero byte to write into, keeping slack to spare.
func (w *bitWriter) newByte() {
	if cap(w.b)-len(w.b) <= slack {
		w.b = slices.Grow(w.b, slack+1)
	}
	w.b = append(w.b, 0)
	w.free = 8
}

// writeBits appends the low n bits of v, n in 0..64.
func (w *bitWriter) writeBits(v uint64, n uint8) {
	for n > 0 {
		if w.free == 0 {
			w.newByte()
		}
		k := min(n, w.free)
		chunk := byte(v>>(n-k)) & byte(1<<k-1)
		w.free -= k
		w.b[len(w.b)-1] |= chunk << w.free
		n -= k
	}
}

// bitReader reads bits written by a bitWriter. Reads look at the next
// eight bytes as one big-endian word (peek), so a read of up to 56 bits
// is a load and two shifts, whatever its alignment. They do not check the
// end: past it they read whatever the padding holds, and the caller asks
// overrun once per decoded value instead of once per field, discarding a
// value that ran past the end.
type bitReader struct {
	b   []byte // the bytes and at least slack more
	pos uint   // bit position
	end uint   // bits in the stream: 8 * the bytes before the padding
}

// newBitReader reads b from its first bit. It reads the capacity a
// bitWriter keeps past its last byte; bytes without it are copied once
// into a padded buffer.
func newBitReader(b []byte) bitReader {
	end := uint(len(b)) * 8
	if cap(b)-len(b) < slack {
		b = append(make([]byte, 0, len(b)+slack), b...)
	}
	return bitReader{b: b[:len(b)+slack], end: end}
}

// peek returns 64 bits from pos on, most significant first, of which at
// least 57 are the stream's (or padding). Past the padding it reads the
// last word again: the position has overrun by then, so the value is
// discarded, and the read never leaves the buffer.
func (r *bitReader) peek() uint64 {
	i := min(r.pos>>3, uint(len(r.b))-slack)
	return binary.BigEndian.Uint64(r.b[i:]) << (r.pos & 7)
}

// take reads n bits, n in 0..56, without a bounds check: the caller
// checks overrun once per decoded value.
func (r *bitReader) take(n uint8) uint64 {
	v := r.peek() >> (64 - n) // a shift by 64 is 0, as n = 0 needs
	r.pos += uint(n)
	return v
}

// takeN is take for n in 0..64.
func (r *bitReader) takeN(n uint8) uint64 {
	if n <= 56 {
		return r.take(n)
	}
	hi := r.take(32)
	return hi<<(n-32) | r.take(n-32)
}

// ones counts up to max (at most 56) one-bits before a zero, unchecked
// like take: the zero is consumed; after max ones there is none.
func (r *bitReader) ones(max int) int {
	o := bits.LeadingZeros64(^r.peek())
	if o >= max {
		r.pos += uint(max)
		return max
	}
	r.pos += uint(o) + 1
	return o
}

// overrun reports whether unchecked reads went past the end.
func (r *bitReader) overrun() bool { return r.pos > r.end }
