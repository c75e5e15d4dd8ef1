package rowkey

import (
	"encoding/binary"
	"math"

	"github.com/tsd-db/tsd/internal/encoding/entropy"
	"github.com/tsd-db/tsd/series"
)

// DenseEncoder writes dense column values. It keeps its buffers between
// calls, so a warm encoder allocates nothing. Not safe for concurrent use.
type DenseEncoder struct {
	ent   entropy.Encoder
	cls   []uint8
	k1    []int64 // each point's k at its own exponent d1
	d1    []uint8
	ks    []int64  // integer chain
	raws  []uint64 // XOR chain
	ncls  [numCls]int
	d     int
	order uint8
	hTS   entropy.Hist
	hCls  entropy.Hist
	hVal  [2]entropy.Hist
	hLZ   entropy.Hist
	hSig  entropy.Hist
	tbl   [6]entropy.Model
	ch    [5]streamChoice // ts, class, value, lz, sig
}

// streamChoice is how one symbol stream is coded.
type streamChoice struct {
	kind uint8
	arg  uint8 // constant symbol or parametric id
	m    *entropy.Model
	bits float64
}

const (
	stTS = iota
	stCls
	stVal
	stLZ
	stSig
)

// Append appends the dense value of pts, the points of the row whose base
// time is baseSec, sorted by time without duplicates (1..MaxDensePoints of
// them), to dst.
func (e *DenseEncoder) Append(dst []byte, baseSec int64, pts []series.Point) ([]byte, error) {
	if err := checkDensePoints(baseSec, pts); err != nil {
		return dst, err
	}
	e.classify(pts)
	regular := e.timeStream(pts)
	e.valueStreams()
	dst = e.appendHeader(dst, baseSec, pts, regular)
	e.queueTokens(pts, regular)
	return e.ent.AppendTo(dst), nil
}

func checkDensePoints(baseSec int64, pts []series.Point) error {
	if len(pts) == 0 || len(pts) > MaxDensePoints {
		return invalidf("dense cell of %d points, want 1..%d", len(pts), MaxDensePoints)
	}
	lo := baseSec * 1000
	prev := lo - 1
	for _, p := range pts {
		if p.T <= prev || p.T >= lo+RowSpanMs {
			return invalidf("dense cell: point at %d ms not after %d or outside row %d", p.T, prev, baseSec)
		}
		prev = p.T
		if p.Kind > series.Float64 || (p.Kind == series.Float32 && unRaw32(raw32(p.Bits)) != p.Bits) {
			return invalidf("dense cell: point at %d ms has kind %d bits %016x", p.T, p.Kind, p.Bits)
		}
	}
	return nil
}

// timeStream counts the delta-of-delta symbols and reports whether they
// are all zero.
func (e *DenseEncoder) timeStream(pts []series.Point) bool {
	e.hTS.Reset()
	var m moments
	for i := 2; i < len(pts); i++ {
		dod := (pts[i].T - pts[i-1].T) - (pts[i-1].T - pts[i-2].T)
		s, _, _ := entropy.Bucket(entropy.Zigzag(dod))
		e.hTS.Add(s)
		f := float64(dod)
		m.abs, m.rms = m.abs+math.Abs(f), m.rms+f*f
	}
	if e.hTS.N() == 0 || (e.hTS.Distinct() == 1 && e.hTS.Only() == 0) {
		return true
	}
	n := float64(e.hTS.N())
	m = moments{m.abs / n, math.Sqrt(m.rms / n)}
	e.ch[stTS] = e.choose(&e.hTS, &e.tbl[stTS], &m)
	return false
}

// choose prices h as a constant, a table and, for delta streams (m set),
// a built-in model, and keeps the cheapest. Costs are in bits, headers
// included.
func (e *DenseEncoder) choose(h *entropy.Hist, tbl *entropy.Model, m *moments) streamChoice {
	if h.Distinct() == 1 {
		return streamChoice{kind: streamConst, arg: h.Only(), bits: 16}
	}
	tbl.Normalize(h)
	best := streamChoice{kind: streamTable, m: tbl, bits: tbl.Cost(h) + 8*float64(1+tbl.TableBytes())}
	if m != nil {
		if id, bits := entropy.BestParametricNear(h, m.abs, m.rms); bits+16 < best.bits {
			best = streamChoice{kind: streamParam, arg: id, m: entropy.Parametric(id), bits: bits + 16}
		}
	}
	return best
}

func (e *DenseEncoder) appendHeader(dst []byte, baseSec int64, pts []series.Point, regular bool) []byte {
	h0 := e.classByte() | e.order<<3 | hStartOne
	if regular {
		h0 |= hRegular
	}
	dst = append(dst, h0)
	dst = binary.AppendUvarint(dst, uint64(len(pts)))
	dst = binary.AppendUvarint(dst, uint64(pts[0].T-baseSec*1000))
	if len(pts) >= 2 {
		dst = binary.AppendUvarint(dst, uint64(pts[1].T-pts[0].T))
	}
	if !regular {
		dst = appendStream(dst, e.ch[stTS])
	}
	if h0&hClassMask == clsMixed {
		dst = appendStream(dst, e.ch[stCls])
		dst = binary.AppendUvarint(dst, uint64(len(e.ks)))
	}
	return e.appendChains(dst, h0&hClassMask)
}

func (e *DenseEncoder) classByte() uint8 {
	for c, n := range e.ncls {
		if n == len(e.cls) {
			return uint8(c)
		}
	}
	return clsMixed
}

func (e *DenseEncoder) appendChains(dst []byte, cls uint8) []byte {
	if hasDecimals(cls) {
		dst = append(dst, byte(e.d))
	}
	if n := len(e.ks); n > 0 {
		dst = binary.AppendUvarint(dst, entropy.Zigzag(e.ks[0]))
		if e.order == 1 && n >= 2 {
			dst = binary.AppendUvarint(dst, entropy.Zigzag(e.ks[1]-e.ks[0]))
		}
		if n >= 2+int(e.order) {
			dst = appendStream(dst, e.ch[stVal])
		}
	}
	if n := len(e.raws); n > 0 {
		dst = binary.BigEndian.AppendUint64(dst, e.raws[0])
		if n >= 2 {
			dst = appendStream(appendStream(dst, e.ch[stLZ]), e.ch[stSig])
		}
	}
	return dst
}

func appendStream(dst []byte, c streamChoice) []byte {
	switch c.kind {
	case streamTable:
		return c.m.AppendTable(append(dst, streamTable))
	case streamParam:
		return append(dst, streamParam, c.arg)
	}
	return append(dst, streamConst, c.arg)
}

// queueTokens queues every symbol and raw bit field in decoding order.
func (e *DenseEncoder) queueTokens(pts []series.Point, regular bool) {
	e.ent.Reset()
	mixed := e.classByte() == clsMixed
	j, r := 0, 0
	for i := range pts {
		if i >= 2 && !regular {
			e.queueBucketed(stTS, (pts[i].T-pts[i-1].T)-(pts[i-1].T-pts[i-2].T))
		}
		c := e.cls[i]
		if mixed {
			e.queueSymbol(stCls, c)
		}
		if inChain(c) {
			e.queueChain(j)
			j++
			continue
		}
		if r > 0 {
			e.queueXOR(e.raws[r] ^ e.raws[r-1])
		}
		r++
	}
}

func (e *DenseEncoder) queueSymbol(st int, s uint8) {
	if c := &e.ch[st]; c.kind != streamConst {
		e.ent.Symbol(c.m, s)
	}
}

func (e *DenseEncoder) queueBucketed(st int, v int64) {
	s, n, rem := entropy.Bucket(entropy.Zigzag(v))
	e.queueSymbol(st, s)
	e.ent.Bits(rem, n)
}

func (e *DenseEncoder) queueChain(j int) {
	if j < 1+int(e.order) {
		return
	}
	delta := e.ks[j] - e.ks[j-1]
	if e.order == 1 {
		delta -= e.ks[j-1] - e.ks[j-2]
	}
	e.queueBucketed(stVal, delta)
}

func (e *DenseEncoder) queueXOR(x uint64) {
	if x == 0 {
		e.queueSymbol(stLZ, 0)
		return
	}
	lz, sig, mid := xorSymbols(x)
	e.queueSymbol(stLZ, lz)
	e.queueSymbol(stSig, sig)
	e.ent.Bits(mid, sig) // sig symbol = significant bits - 1 = raw bits
}
