package rowkey

import (
	"encoding/binary"
	"slices"

	"github.com/tsd-db/tsd/internal/encoding/entropy"
	"github.com/tsd-db/tsd/series"
)

// DenseIter decodes a dense column value point by point. It implements
// series.Iterator. Errors are sticky; a value whose stream does not end
// exactly where it should fails on its last point, so a caller that sees
// Err() == nil after the loop got every point right. The zero value is
// ready after Reset; Reset reuses its tables, so a warm iterator
// allocates nothing. Not safe for concurrent use.
type DenseIter struct {
	base         int64
	n, i         int
	h0, d        uint8
	t, delta, d1 int64
	k, kd        int64
	k0, kd0      int64
	j, nk        int
	raw, raw0    uint64
	r            int
	dec          entropy.Decoder
	st           [5]entropy.Stream
	tbl          [5]*entropy.Model
	cur          series.Point
	valid        bool
	err          error
	bi, bn       int
	sc           *denseScratch
}

// denseScratch holds a DenseIter's batch buffers, kept across Reset.
type denseScratch struct {
	buf       [denseBatch]series.Point
	uts, uval [denseBatch]uint64
}

// denseBatch is how many points Next decodes at a time.
const denseBatch = 64

// Reset starts decoding value, the dense cell of the row whose base time
// is baseSec. A malformed header is reported here and by Err.
func (it *DenseIter) Reset(baseSec int64, value []byte) error {
	tbl, sc := it.tbl, it.sc
	if sc == nil {
		sc = new(denseScratch)
	}
	*it = DenseIter{base: baseSec * 1000, tbl: tbl, sc: sc}
	it.err = it.parseHeader(value)
	if it.err != nil {
		it.n = 0
	}
	return it.err
}

// Len returns the number of points the value holds.
func (it *DenseIter) Len() int { return it.n }

// header is a cursor over the value's header bytes.
type header struct {
	b   []byte
	err error
}

func (h *header) uvarint(max uint64, what string) uint64 {
	if h.err != nil {
		return 0
	}
	v, n := binary.Uvarint(h.b)
	if n <= 0 || v > max {
		h.err = corruptf("dense value: bad %s", what)
		return 0
	}
	h.b = h.b[n:]
	return v
}

func (h *header) byte1(what string) byte {
	if h.err != nil || len(h.b) == 0 {
		h.fail(what)
		return 0
	}
	c := h.b[0]
	h.b = h.b[1:]
	return c
}

func (h *header) fail(what string) {
	if h.err == nil {
		h.err = corruptf("dense value: truncated %s", what)
	}
}

func (it *DenseIter) parseHeader(value []byte) error {
	h := header{b: value}
	it.h0 = h.byte1("header")
	cls := it.h0 & hClassMask
	if h.err == nil && (it.h0&hReserved != 0 || (cls >= numCls && cls != clsMixed)) {
		return corruptf("dense value: header byte %02x", it.h0)
	}
	it.n = int(h.uvarint(MaxDensePoints, "point count"))
	it.t = int64(h.uvarint(RowSpanMs-1, "first offset"))
	if h.err == nil && it.n == 0 {
		return corruptf("dense value: no points")
	}
	if it.n >= 2 {
		it.d1 = int64(h.uvarint(RowSpanMs-1, "first delta"))
	}
	if it.h0&hRegular == 0 {
		it.parseStream(&h, stTS, entropy.NumSymbols)
	}
	it.nk = it.n * boolInt(inChain(cls))
	if cls == clsMixed {
		it.parseStream(&h, stCls, numCls)
		it.nk = int(h.uvarint(uint64(it.n), "chain count"))
	}
	it.parseChains(&h, cls)
	if h.err != nil {
		return h.err
	}
	var err error
	if it.h0&hStartOne != 0 {
		err = it.dec.Init(h.b)
	} else {
		err = it.dec.InitLegacy(h.b)
	}
	if err != nil {
		return corruptf("dense value: %v", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (it *DenseIter) parseChains(h *header, cls uint8) {
	if hasDecimals(cls) {
		if it.d = h.byte1("decimal exponent"); it.d > maxDecimals {
			h.err = corruptf("dense value: decimal exponent %d", it.d)
		}
	}
	order := int(it.h0&hOrder2) >> 3
	if it.nk > 0 {
		it.k0 = entropy.Unzigzag(h.uvarint(1<<64-1, "first value"))
		if order == 1 && it.nk >= 2 {
			it.kd0 = entropy.Unzigzag(h.uvarint(1<<64-1, "first value delta"))
		}
		if it.nk >= 2+order {
			it.parseStream(h, stVal, entropy.NumSymbols)
		}
	}
	if nr := it.n - it.nk; nr > 0 {
		if len(h.b) < 8 {
			h.fail("first raw value")
			return
		}
		it.raw0, h.b = binary.BigEndian.Uint64(h.b), h.b[8:]
		if nr >= 2 {
			it.parseStream(h, stLZ, 65)
			it.parseStream(h, stSig, 64)
		}
	}
}

// parseStream reads one stream descriptor; limit bounds its symbols.
func (it *DenseIter) parseStream(h *header, st int, limit int) {
	switch h.byte1("stream") {
	case streamConst:
		if s := h.byte1("constant"); h.err == nil && int(s) >= limit {
			h.err = corruptf("dense value: constant symbol %d", s)
		} else {
			it.st[st] = entropy.Stream{Const: s}
		}
	case streamParam:
		it.st[st] = entropy.Stream{M: entropy.Parametric(h.byte1("model"))}
	case streamTable:
		if it.tbl[st] == nil {
			it.tbl[st] = new(entropy.Model)
		}
		if h.err == nil {
			h.b, h.err = it.tbl[st].ParseTable(h.b)
		}
		it.st[st] = entropy.Stream{M: it.tbl[st]}
	default:
		if h.err == nil {
			h.err = corruptf("dense value: stream kind")
		}
	}
}

func (it *DenseIter) symbol(st int) uint8 {
	if s := &it.st[st]; s.M != nil {
		return it.dec.Symbol(s.M)
	}
	return it.st[st].Const
}

func (it *DenseIter) bucketed(st int) int64 {
	s := it.symbol(st)
	return entropy.Unzigzag(entropy.SymbolBase(s) | it.dec.Bits(entropy.SymbolExtra(s)))
}

// Next implements series.Iterator.
func (it *DenseIter) Next() bool {
	if it.bi < it.bn {
		it.bi++
		return true
	}
	return it.nextBatch()
}

func (it *DenseIter) nextBatch() bool {
	if it.sc == nil {
		return false
	}
	it.bn = it.fill(it.sc.buf[:])
	it.valid = it.bn > 0
	it.bi = min(it.bn, 1)
	return it.valid
}

// fill decodes up to len(out) points into out and returns how many. The
// batch that holds the last point is withheld if the stream does not end
// cleanly.
func (it *DenseIter) fill(out []series.Point) int {
	if it.err != nil || it.i >= it.n {
		return 0
	}
	var n int
	if c := it.h0 & hClassMask; inChain(c) {
		n = it.fillChain(out, c)
	} else {
		n = it.fillGeneric(out)
	}
	if it.err == nil && it.i == it.n && !it.finish() {
		return 0
	}
	return n
}

func (it *DenseIter) fillGeneric(out []series.Point) int {
	b := 0
	for b < len(out) && it.i < it.n && it.next() {
		out[b] = it.cur
		b++
	}
	return b
}

func (it *DenseIter) next() bool {
	if it.err != nil || it.i >= it.n || !it.nextTime() {
		return false
	}
	c := it.h0 & hClassMask
	if c == clsMixed {
		if c = it.symbol(stCls); c >= numCls {
			return it.fail("class symbol %d", c)
		}
	}
	if !it.nextValue(c) {
		return false
	}
	it.i++
	return true
}

func (it *DenseIter) nextTime() bool {
	switch {
	case it.i == 0:
	case it.i == 1:
		it.delta = it.d1
		it.t += it.delta
	default:
		if it.h0&hRegular == 0 {
			it.delta += it.bucketed(stTS)
		}
		it.t += it.delta
	}
	if it.t < 0 || it.t >= RowSpanMs || (it.i > 0 && it.delta <= 0) {
		return it.fail("point %d at offset %d ms", it.i, it.t)
	}
	it.cur.T = it.base + it.t
	return true
}

func (it *DenseIter) nextValue(c uint8) bool {
	if inChain(c) {
		return it.nextChain(c)
	}
	if it.r == 0 {
		it.raw = it.raw0
	} else if !it.nextXOR() {
		return false
	}
	it.r++
	if c == clsRaw32 {
		if it.raw>>32 != 0 {
			return it.fail("float32 raw value %x", it.raw)
		}
		it.cur.Bits, it.cur.Kind = unRaw32(it.raw), series.Float32
		return true
	}
	it.cur.Bits, it.cur.Kind = it.raw, series.Float64
	return true
}

func (it *DenseIter) nextChain(c uint8) bool {
	switch order := it.h0 & hOrder2; {
	case it.j == 0:
		it.k = it.k0
	case order == 0:
		it.k += it.bucketed(stVal)
	case it.j == 1:
		it.kd = it.kd0
		it.k += it.kd
	default:
		it.kd += it.bucketed(stVal)
		it.k += it.kd
	}
	it.j++
	switch c {
	case clsInt:
		if it.d > 0 && it.k%pow10i[it.d] != 0 {
			return it.fail("integer %d not a multiple of 10^%d", it.k, it.d)
		}
		it.cur.Bits, it.cur.Kind = uint64(it.k/pow10i[it.d]), series.Int
	case clsDec64:
		it.cur.Bits, it.cur.Kind = unDecimal64(it.k, it.d), series.Float64
	default:
		it.cur.Bits, it.cur.Kind = unDecimal32(it.k, it.d), series.Float32
	}
	return true
}

func (it *DenseIter) nextXOR() bool {
	lz := it.symbol(stLZ)
	if lz == 0 {
		return true
	}
	sigSym := it.symbol(stSig)
	if lz > 64 || int(lz)+int(sigSym) > 64 {
		return it.fail("xor shape %d/%d", lz, sigSym)
	}
	sig := sigSym + 1
	mid := it.dec.Bits(sig-1) | 1<<(sig-1)
	it.raw ^= mid << (64 - (lz - 1) - sig)
	return true
}

func (it *DenseIter) finish() bool {
	if err := it.dec.Done(); err != nil {
		return it.fail("%v", err)
	}
	if it.j != it.nk {
		return it.fail("%d chain points, header says %d", it.j, it.nk)
	}
	return true
}

func (it *DenseIter) fail(format string, args ...any) bool {
	it.err = corruptf("dense value: "+format, args...)
	return false
}

// SeekTime implements series.Iterator.
func (it *DenseIter) SeekTime(t int64) bool {
	if it.valid && it.At().T >= t {
		return true
	}
	for it.Next() {
		if it.At().T >= t {
			return true
		}
	}
	return false
}

// At implements series.Iterator.
func (it *DenseIter) At() series.Point { return it.sc.buf[it.bi-1] }

// Err implements series.Iterator.
func (it *DenseIter) Err() error { return it.err }

// DecodeDense appends the points of a dense value of the row at baseSec
// to dst using it (reused between calls). On error dst is returned
// unchanged.
func (it *DenseIter) DecodeDense(dst []series.Point, baseSec int64, value []byte) ([]series.Point, error) {
	if err := it.Reset(baseSec, value); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = slices.Grow(dst, it.n)[:start+it.n]
	if n := it.fill(dst[start:]); n != it.n || it.err != nil {
		if it.err == nil {
			it.err = corruptf("dense value: %d of %d points", n, it.n)
		}
		return dst[:start], it.err
	}
	return dst, nil
}
