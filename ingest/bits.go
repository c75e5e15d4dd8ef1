package ingest

// bitWriter appends bits, most significant first, to a byte slice.
type bitWriter struct {
	b    []byte
	free uint8 // unused low bits of the last byte
}

// reset empties the writer and keeps its capacity.
func (w *bitWriter) reset() { w.b, w.free = w.b[:0], 0 }

// writeBit appends one bit.
func (w *bitWriter) writeBit(bit bool) {
	if w.free == 0 {
		w.b = append(w.b, 0)
		w.free = 8
	}
	w.free--
	if bit {
		w.b[len(w.b)-1] |= 1 << w.free
	}
}

// writeBits appends the low n bits of v, n in 0..64.
func (w *bitWriter) writeBits(v uint64, n uint8) {
	for n > 0 {
		if w.free == 0 {
			w.b = append(w.b, 0)
			w.free = 8
		}
		k := min(n, w.free)
		chunk := byte(v>>(n-k)) & byte(1<<k-1)
		w.free -= k
		w.b[len(w.b)-1] |= chunk << w.free
		n -= k
	}
}

// bitReader reads bits written by a bitWriter. Reads past the end fail
// sticky-free: every read reports whether it had the bits.
type bitReader struct {
	b   []byte
	pos uint // bit position
}

// readBit reads one bit.
func (r *bitReader) readBit() (bool, bool) {
	i := r.pos >> 3
	if i >= uint(len(r.b)) {
		return false, false
	}
	bit := r.b[i]&(0x80>>(r.pos&7)) != 0
	r.pos++
	return bit, true
}

// readBits reads n bits, n in 0..64, as the low bits of the result.
func (r *bitReader) readBits(n uint8) (uint64, bool) {
	if r.pos+uint(n) > uint(len(r.b))*8 {
		return 0, false
	}
	var v uint64
	for n > 0 {
		avail := 8 - uint8(r.pos&7)
		k := min(n, avail)
		byt := r.b[r.pos>>3] >> (avail - k) & byte(1<<k-1)
		v = v<<k | uint64(byt)
		r.pos += uint(k)
		n -= k
	}
	return v, true
}

// unary counts up to max one-bits before a zero (the zero is consumed; after
// max ones there is no terminating zero).
func (r *bitReader) unary(max int) (int, bool) {
	for i := range max {
		bit, ok := r.readBit()
		if !ok {
			return 0, false
		}
		if !bit {
			return i, true
		}
	}
	return max, true
}
