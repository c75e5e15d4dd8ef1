package entropy

import (
	"encoding/binary"
	"errors"
)

// The coder is a byte-wise rANS with a 32-bit state kept in [ransL, 2^31)
// once it has emitted a byte. The encoder starts at startState, not at
// ransL as rANS usually does: a start at ransL carries 23 bits the
// decoder already knows, which the stream pays for all the same, about 3
// bytes a stream (doc.go, "rANS stream").
const (
	ransL      = 1 << 23
	startState = 1
	stateBytes = 4
	// RawChunk is the most raw bits one token carries.
	RawChunk = 16
)

// ErrCorrupt marks a stream that does not decode to its own end.
var ErrCorrupt = errors.New("corrupt entropy-coded stream")

type token struct {
	m    *Model // nil for raw bits
	v    uint16 // symbol or raw bits
	bits uint8  // raw bit count
}

// Encoder collects symbols and raw bits in decoding order and writes them
// as one rANS stream. rANS decodes in the reverse order of encoding, so the
// tokens are buffered and encoded backwards in AppendTo. The zero value is
// ready; Reset keeps the buffers.
type Encoder struct {
	toks []token
	rev  []byte
}

// Reset empties the encoder and keeps its capacity.
func (e *Encoder) Reset() { e.toks, e.rev = e.toks[:0], e.rev[:0] }

// Len returns the number of buffered tokens.
func (e *Encoder) Len() int { return len(e.toks) }

// Symbol queues symbol s coded with m; m.Freq[s] must be non-zero.
func (e *Encoder) Symbol(m *Model, s uint8) {
	e.toks = append(e.toks, token{m: m, v: uint16(s)})
}

// Bits queues the n low bits of v (n <= 64) as raw bits, low chunk first.
func (e *Encoder) Bits(v uint64, n uint8) {
	for n > RawChunk {
		e.toks = append(e.toks, token{v: uint16(v), bits: RawChunk})
		v >>= RawChunk
		n -= RawChunk
	}
	if n > 0 {
		e.toks = append(e.toks, token{v: uint16(v) & (1<<n - 1), bits: n})
	}
}

// AppendTo encodes the queued tokens and appends the stream to dst: the
// final state (4 bytes, big-endian) then the renormalisation bytes in the
// order the decoder reads them. With no tokens it appends nothing.
func (e *Encoder) AppendTo(dst []byte) []byte {
	return e.appendFrom(dst, startState)
}

// appendFrom is AppendTo with the state starting at x; tests write
// streams of the earlier start, ransL, with it.
func (e *Encoder) appendFrom(dst []byte, x uint32) []byte {
	if len(e.toks) == 0 {
		return dst
	}
	rev := e.rev[:0]
	for i := len(e.toks) - 1; i >= 0; i-- {
		t := &e.toks[i]
		if t.m == nil {
			for x >= 1<<(31-t.bits) {
				rev = append(rev, byte(x))
				x >>= 8
			}
			x = x<<t.bits | uint32(t.v)
			continue
		}
		f, c := uint32(t.m.Freq[t.v]), uint32(t.m.Cum[t.v])
		for x >= f<<(31-t.m.M) {
			rev = append(rev, byte(x))
			x >>= 8
		}
		x = (x/f)<<t.m.M + x%f + c
	}
	e.rev = rev
	dst = binary.BigEndian.AppendUint32(dst, x)
	for i := len(rev) - 1; i >= 0; i-- {
		dst = append(dst, rev[i])
	}
	return dst
}

// Decoder reads a stream written by Encoder.AppendTo. A state below
// ransL takes the next byte while there is one: the encoder emits its
// first byte only once its state could pass 2^31, and from then on keeps
// it at ransL or above, so a decoder that has read every byte is in the
// encoder's first steps. Corrupt input makes Done fail, never a panic.
type Decoder struct {
	x, start uint64
	src      []byte
	pos      int
}

// Init starts decoding src, the whole stream. An empty src is a stream with
// no tokens.
func (d *Decoder) Init(src []byte) error { return d.init(src, startState) }

// InitLegacy starts decoding src written with the state starting at
// ransL, as every stream was before startState: rowkey's cells without
// their header's bit 5.
func (d *Decoder) InitLegacy(src []byte) error { return d.init(src, ransL) }

func (d *Decoder) init(src []byte, start uint64) error {
	*d = Decoder{x: start, start: start, src: src}
	if len(src) == 0 {
		return nil
	}
	if len(src) < stateBytes {
		return ErrCorrupt
	}
	d.x = uint64(binary.BigEndian.Uint32(src))
	d.pos = stateBytes
	low := uint64(ransL)
	if len(src) == stateBytes {
		low = start // a stream that never emitted a byte
	}
	if d.x < low || d.x >= 1<<31 {
		return ErrCorrupt
	}
	return nil
}

// Symbol decodes one symbol coded with m.
func (d *Decoder) Symbol(m *Model) uint8 {
	e := m.dec[d.x&m.mask]
	d.x = uint64(e>>12&0xfff)*(d.x>>m.M) + uint64(e&0xfff)
	if d.x < ransL {
		d.refill()
	}
	return uint8(e >> 24)
}

// Bits decodes n raw bits (n <= 64) queued by Encoder.Bits.
func (d *Decoder) Bits(n uint8) uint64 {
	var v uint64
	for sh := uint8(0); n > 0; sh += RawChunk {
		k := min(n, RawChunk)
		v |= (d.x & (1<<k - 1)) << sh
		d.x >>= k
		if d.x < ransL {
			d.refill()
		}
		n -= k
	}
	return v
}

func (d *Decoder) refill() {
	for d.x < ransL && d.pos < len(d.src) {
		d.x = d.x<<8 | uint64(d.src[d.pos])
		d.pos++
	}
}

// Done reports whether the stream decoded exactly to its end: every byte
// consumed and the state back at the encoder's start.
func (d *Decoder) Done() error {
	if d.pos != len(d.src) || d.x != d.start {
		return ErrCorrupt
	}
	return nil
}

// Bucketed decodes one bucket symbol coded with m and its raw bits: the
// value Bucket split. One call per value keeps the decoder's hot loop
// short.
func (d *Decoder) Bucketed(m *Model) uint64 {
	e := m.dec[d.x&m.mask]
	d.x = uint64(e>>12&0xfff)*(d.x>>m.M) + uint64(e&0xfff)
	if d.x < ransL {
		d.refill()
	}
	s := uint8(e >> 24)
	n := symExtra[s]
	switch {
	case n == 0:
		return symBase[s]
	case n <= RawChunk:
		v := d.x & (1<<n - 1)
		d.x >>= n
		if d.x < ransL {
			d.refill()
		}
		return symBase[s] | v
	}
	return symBase[s] | d.Bits(n)
}

// BucketedConst decodes the raw bits of constant symbol s.
func (d *Decoder) BucketedConst(s uint8) uint64 {
	if n := symExtra[s]; n > 0 {
		return symBase[s] | d.Bits(n)
	}
	return symBase[s]
}
