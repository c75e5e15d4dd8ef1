package entropy

import (
	"encoding/binary"
	"errors"
)

// The coder is a byte-wise rANS with a 32-bit state kept in [ransL, 2^31).
const (
	ransL      = 1 << 23
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
	if len(e.toks) == 0 {
		return dst
	}
	x := uint32(ransL)
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

// Decoder reads a stream written by Encoder.AppendTo. Reads past the end
// yield zero bytes and make Done fail, so corrupt input never panics.
type Decoder struct {
	x       uint64
	src     []byte
	pos     int
	overrun bool
}

// Init starts decoding src, the whole stream. An empty src is a stream with
// no tokens.
func (d *Decoder) Init(src []byte) error {
	*d = Decoder{x: ransL, src: src}
	if len(src) == 0 {
		return nil
	}
	if len(src) < stateBytes {
		return ErrCorrupt
	}
	d.x = uint64(binary.BigEndian.Uint32(src))
	d.pos = stateBytes
	if d.x < ransL || d.x >= 1<<31 {
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
	for d.x < ransL {
		var b byte
		if d.pos < len(d.src) {
			b = d.src[d.pos]
			d.pos++
		} else {
			d.overrun = true
		}
		d.x = d.x<<8 | uint64(b)
	}
}

// Done reports whether the stream decoded exactly to its end: every byte
// consumed and the state back at its initial value.
func (d *Decoder) Done() error {
	if d.overrun || d.pos != len(d.src) || d.x != ransL {
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
