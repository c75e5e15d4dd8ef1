package head

import (
	"math/bits"
	"slices"

	"github.com/tsd-db/tsd/series"
)

// RowSpan is the time an OpenTSDB row covers, in milliseconds (one hour).
const RowSpan = 3600_000

// MaxTimestamp is the last millisecond a row key's 4-byte base time (in
// seconds) can hold.
const MaxTimestamp = (1<<32)*1000 - 1

// rowBase returns the start of the hour row holding t (t >= 0).
func rowBase(t int64) int64 { return t - t%RowSpan }

const (
	offsetBits = 22   // a point's offset in its row: RowSpan < 1<<22
	noWindow   = 0xff // rowChunk.lead before any XOR window exists
)

// Bucket widths after a unary prefix of 0..4 ones; prefix 0 means zero.
var (
	tsBuckets  = [5]uint8{0, 7, 12, 17, 25}
	intBuckets = [5]uint8{0, 2, 6, 20, 64}
)

// rowChunk is the in-order part of an open row, compressed as a bit
// stream (byte format in doc.go). Points are appended with strictly
// increasing timestamps inside one row.
type rowChunk struct {
	w           bitWriter
	n           uint32
	t, dt       int64  // last timestamp and timestamp delta
	v           uint64 // last value bits
	kind        series.Kind
	ms          bool  // the run's points are millisecond points
	lead, trail uint8 // XOR window of the last float
}

// reset empties the chunk and keeps its buffer.
func (c *rowChunk) reset() {
	w := c.w
	w.reset()
	*c = rowChunk{w: w}
}

// append adds p, which lies in the row at base and after the last point.
func (c *rowChunk) append(base int64, p series.Point) {
	if c.n == 0 {
		c.w.writeBits(uint64(p.T-base), offsetBits)
		writeKind(&c.w, p)
		c.first(p)
	} else {
		dt := p.T - c.t
		writeBucketed(&c.w, dt-c.dt, &tsBuckets)
		c.dt = dt
		c.appendValue(p)
	}
	c.t = p.T
	c.n++
}

// first stores p's value raw and starts a run of its kind.
func (c *rowChunk) first(p series.Point) {
	c.w.writeBits(p.Bits, 64)
	c.kind, c.ms, c.v, c.lead = p.Kind, p.Ms, p.Bits, noWindow
}

// kindMs is the 2-bit kind code that announces a millisecond point
// (series.Point.Ms): the point's kind follows in 2 more bits. Points
// without it keep the one 2-bit code, so they cost nothing more.
const kindMs = 3

// writeKind writes p's kind code, with the millisecond escape when p.Ms.
func writeKind(w *bitWriter, p series.Point) {
	if p.Ms {
		w.writeBits(kindMs, 2)
	}
	w.writeBits(uint64(p.Kind), 2)
}

// appendValue stores the value of a point after the first. A change of
// kind or of millisecond mark starts a new run.
func (c *rowChunk) appendValue(p series.Point) {
	if p.Kind != c.kind || p.Ms != c.ms {
		c.w.writeBit(true)
		writeKind(&c.w, p)
		c.first(p)
		return
	}
	c.w.writeBit(false)
	if p.Kind == series.Int {
		// Deltas, not deltas of deltas: gauges, the common case, step
		// around a level and would double their steps.
		writeBucketed(&c.w, int64(p.Bits-c.v), &intBuckets)
		c.v = p.Bits
		return
	}
	c.appendXOR(p.Bits)
}

// appendXOR stores a float as the XOR with the previous one: '0' for equal,
// '10' and the bits inside the previous window, or '11', the leading-zero
// count (5 bits, at most 31), the significant bit count minus one (6 bits)
// and the significant bits.
func (c *rowChunk) appendXOR(v uint64) {
	x := v ^ c.v
	c.v = v
	if x == 0 {
		c.w.writeBit(false)
		return
	}
	lead, trail := uint8(min(bits.LeadingZeros64(x), 31)), uint8(bits.TrailingZeros64(x))
	if c.lead != noWindow && lead >= c.lead && trail >= c.trail {
		c.w.writeBits(0b10, 2)
		c.w.writeBits(x>>c.trail, 64-c.lead-c.trail)
		return
	}
	sig := 64 - lead - trail
	c.w.writeBits(0b11, 2)
	c.w.writeBits(uint64(lead), 5)
	c.w.writeBits(uint64(sig-1), 6)
	c.w.writeBits(x>>trail, sig)
	c.lead, c.trail = lead, trail
}

// writeBucketed writes v as a unary bucket number and v in that bucket's
// width (two's complement).
func writeBucketed(w *bitWriter, v int64, widths *[5]uint8) {
	if v == 0 {
		w.writeBit(false)
		return
	}
	for i := 1; i < 5; i++ {
		n := widths[i]
		if i < 4 && !fitsSigned(v, n) {
			continue
		}
		w.writeBits(bucketPrefix[i].code, bucketPrefix[i].n)
		w.writeBits(uint64(v), n)
		return
	}
}

// bucketPrefix[i] is i ones, then a zero unless i is the last bucket.
var bucketPrefix = [5]struct {
	code uint64
	n    uint8
}{{0, 1}, {0b10, 2}, {0b110, 3}, {0b1110, 4}, {0b1111, 4}}

// fitsSigned reports whether v fits in n bits of two's complement.
func fitsSigned(v int64, n uint8) bool {
	return n == 64 || (v >= -(1<<(n-1)) && v < 1<<(n-1))
}

// signExtend reads the low n bits of u as two's complement.
func signExtend(u uint64, n uint8) int64 {
	s := 64 - n
	return int64(u<<s) >> s
}

// chunkIter decodes a rowChunk. A decoding failure (only possible for
// bytes not written by rowChunk) ends the iteration and sets bad.
//
// Fields are read unchecked (bitReader.take reads zeros past the end) and
// the end is checked once per point: a point whose bits ran past the end
// is a failure, so no garbage point is returned.
type chunkIter struct {
	r           bitReader
	left        uint32
	base        int64
	t, dt       int64
	v           uint64
	kind        series.Kind
	ms          bool
	lead, trail uint8
	first       bool
	bad         bool
	p           series.Point
}

// reset starts decoding n points of b, a chunk of the row at base.
func (it *chunkIter) reset(b []byte, n uint32, base int64) {
	*it = chunkIter{r: newBitReader(b), left: n, base: base, first: true}
}

// next decodes the next point into it.p.
func (it *chunkIter) next() bool {
	if it.left == 0 {
		return false
	}
	var ok bool
	if it.first {
		ok = it.readFirst()
		it.first = false
	} else {
		ok = it.readNext()
	}
	if !ok || it.r.overrun() {
		it.bad, it.left = true, 0
		return false
	}
	it.left--
	it.p = series.Point{T: it.t, Bits: it.v, Kind: it.kind, Ms: it.ms}
	return true
}

// appendAll appends the points left to dst and reports whether they all
// decoded; on failure dst holds the points before the bad one. It is next
// in one loop over locals: a row's decode is most of a head read.
func (it *chunkIter) appendAll(dst []series.Point) ([]series.Point, bool) {
	dst = slices.Grow(dst, int(it.left))
	if it.first {
		if !it.next() {
			return dst, !it.bad
		}
		dst = append(dst, it.p)
	}
	r := it.r
	t, dt, v, kind, ms := it.t, it.dt, it.v, it.kind, it.ms
	x := xorState{lead: it.lead, trail: it.trail}
	ok := true
	for n := it.left; n > 0 && ok; n-- {
		if kind == series.Int {
			var k uint32
			if dst, k, t, v = appendIntRun(&r, dst, n, t, dt, v, ms); k == n {
				break
			}
			n -= k
		}
		if r.peek()>>62 == 0 { // same interval, same kind: most points
			r.pos += 2
			t += dt
		} else {
			dt += readBucketed(&r, &tsBuckets)
			t += dt
			if r.take(1) == 1 { // the kind changed
				k := r.take(2)
				if ms = k == kindMs; ms {
					k = r.take(2)
				}
				kind, v, x.lead = series.Kind(k), r.takeN(64), noWindow
				ok = k <= uint64(series.Float64)
				goto emit
			}
		}
		if kind == series.Int {
			if r.peek()>>63 == 0 { // no change
				r.pos++
			} else {
				v += uint64(readBucketed(&r, &intBuckets))
			}
		} else {
			ok = x.read(&r, &v)
		}
	emit:
		ok = ok && !r.overrun()
		if ok {
			dst = append(dst, series.Point{T: t, Bits: v, Kind: kind, Ms: ms})
		}
	}
	it.left, it.bad = 0, !ok
	return dst, ok
}

// intRun[w] decodes the point whose code starts with the 12 bits w when
// it is an integer point at the same interval, of the same kind, whose
// value changed by a 0-, 2- or 6-bit bucket: "00" then "0", "10" and 2
// bits, or "110" and 6 bits (most points of a gauge). n is the bits the
// point takes, 0 for any other code.
var intRun = func() (t [1 << 12]struct {
	n uint8
	d int8
}) {
	for w := range t {
		switch {
		case w>>9 == 0b000:
			t[w].n = 3
		case w>>8 == 0b0010:
			t[w].n, t[w].d = 6, int8(signExtend(uint64(w>>6&0b11), 2))
		case w>>7 == 0b00110:
			t[w].n, t[w].d = 11, int8(signExtend(uint64(w>>1&0b111111), 6))
		}
	}
	return t
}()

// appendIntRun appends up to n integer points that intRun decodes, several
// per load of the stream, and returns how many it took with the last
// time and value. It stops before any other code and before a point that
// would end past the stream, which the caller's general loop then reads
// (and rejects) as it would have.
func appendIntRun(r *bitReader, dst []series.Point, n uint32, t, dt int64, v uint64, ms bool) ([]series.Point, uint32, int64, uint64) {
	var k uint32
	for k < n {
		w, used := r.peek(), uint(0)
		// peek holds at least 57 of the stream's bits: an index of 12
		// fits while used <= 45.
		for used <= 45 && k < n {
			e := intRun[w>>52]
			if e.n == 0 || r.pos+used+uint(e.n) > r.end {
				r.pos += used
				return dst, k, t, v
			}
			w <<= e.n
			used += uint(e.n)
			t += dt
			v += uint64(int64(e.d))
			dst = append(dst, series.Point{T: t, Bits: v, Kind: series.Int, Ms: ms})
			k++
		}
		r.pos += used
	}
	return dst, k, t, v
}

// readFirst decodes the first point of the chunk.
func (it *chunkIter) readFirst() bool {
	off := it.r.take(offsetBits)
	it.t = it.base + int64(off)
	return it.readRaw(it.r.take(2))
}

// readRaw starts a run of kind code k (kindMs: a millisecond run, its
// kind in the next 2 bits) with a raw 64-bit value.
func (it *chunkIter) readRaw(k uint64) bool {
	if it.ms = k == kindMs; it.ms {
		k = it.r.take(2)
	}
	it.kind, it.v, it.lead = series.Kind(k), it.r.takeN(64), noWindow
	return k <= uint64(series.Float64)
}

// readNext decodes a point after the first.
func (it *chunkIter) readNext() bool {
	it.dt += readBucketed(&it.r, &tsBuckets)
	it.t += it.dt
	switch {
	case it.r.take(1) == 1: // the kind changed
		return it.readRaw(it.r.take(2))
	case it.kind == series.Int:
		it.v += uint64(readBucketed(&it.r, &intBuckets))
		return true
	}
	return it.readXOR()
}

// readXOR decodes a float stored by appendXOR.
func (it *chunkIter) readXOR() bool {
	x := xorState{lead: it.lead, trail: it.trail}
	ok := x.read(&it.r, &it.v)
	it.lead, it.trail = x.lead, x.trail
	return ok
}

// xorState is the XOR window of the last float.
type xorState struct{ lead, trail uint8 }

// read decodes a float stored by appendXOR into v.
func (x *xorState) read(r *bitReader, v *uint64) bool {
	switch r.ones(2) {
	case 0:
		return true
	case 1:
		if x.lead == noWindow {
			return false
		}
		*v ^= r.takeN(64-x.lead-x.trail) << x.trail
		return true
	}
	lead := uint8(r.take(5))
	sig := uint8(r.take(6)) + 1
	if lead+sig > 64 {
		return false
	}
	x.lead, x.trail = lead, 64-lead-sig
	*v ^= r.takeN(sig) << x.trail
	return true
}

// readBucketed reads a value written by writeBucketed.
func readBucketed(r *bitReader, widths *[5]uint8) int64 {
	n := widths[r.ones(4)]
	return signExtend(r.takeN(n), n)
}
