package rowkey

import (
	"math"

	"github.com/tsd-db/tsd/internal/encoding/entropy"
	"github.com/tsd-db/tsd/series"
)

// classify gives each point its class and fills the two chains. A float
// joins the integer chain when some d <= 15 makes it exactly k/10^d as the
// decoder will compute it; all chain points share the largest d found.
func (e *DenseEncoder) classify(pts []series.Point) {
	e.cls, e.k1, e.d1 = e.cls[:0], e.k1[:0], e.d1[:0]
	dmax, fails, decs := 0, 0, 0
	for _, p := range pts {
		c, k, d := uint8(clsInt), int64(p.Bits), 0
		switch p.Kind {
		case series.Float64:
			c, k, d = e.floatClass(p.Bits, decimal64, clsDec64, clsRaw64, &dmax, &fails, &decs)
		case series.Float32:
			c, k, d = e.floatClass(p.Bits, decimal32, clsDec32, clsRaw32, &dmax, &fails, &decs)
		}
		e.cls, e.k1, e.d1 = append(e.cls, c), append(e.k1, k), append(e.d1, uint8(d))
	}
	if !e.fillChains(pts, dmax) || (e.d > 0 && e.ncls[clsDec32]+e.ncls[clsDec64] == 0) {
		e.fillChains(pts, 0)
	}
}

// floatClass searches d upwards from the largest d so far and returns the
// class, k and the d that k is for. After many misses and few hits it
// stops searching: the series is not decimal.
func (e *DenseEncoder) floatClass(bits uint64, dec func(uint64, int) (int64, bool), decCls, rawCls uint8, dmax, fails, decs *int) (uint8, int64, int) {
	if *fails >= 8 && *fails > *decs {
		return rawCls, 0, 0
	}
	for d := *dmax; d <= maxDecimals; d++ {
		if k, ok := dec(bits, d); ok {
			*dmax = d
			*decs++
			return decCls, k, d
		}
	}
	*fails++
	return rawCls, 0, 0
}

// fillChains computes each chain point's k at exponent d; a decimal point
// that is not exact at d becomes raw. It fails when an integer overflows
// once scaled by 10^d.
func (e *DenseEncoder) fillChains(pts []series.Point, d int) bool {
	e.ks, e.raws, e.ncls, e.d = e.ks[:0], e.raws[:0], [numCls]int{}, d
	for i, p := range pts {
		c := e.cls[i]
		k, ok := e.k1[i], true
		if c <= clsDec64 && (c == clsInt || int(e.d1[i]) != d) {
			k, c, ok = chainK(p.Bits, k, c, int(e.d1[i]), d)
		}
		if !ok {
			return false
		}
		e.cls[i] = c
		e.ncls[c]++
		switch c {
		case clsRaw64:
			e.raws = append(e.raws, p.Bits)
		case clsRaw32:
			e.raws = append(e.raws, raw32(p.Bits))
		default:
			e.ks = append(e.ks, k)
		}
	}
	return true
}

// exactScale bounds the k that float64 (2^53) and float32 (2^24) hold
// exactly: below it, k*10^(d-dk) over 10^d rounds to the same float as
// k over 10^dk, so the rescaled k needs no check.
var exactScale = [3]int64{clsInt: 0, clsDec32: 1 << 24, clsDec64: 1 << 53}

// chainK rescales k (exact at exponent dk) to exponent d, or rechecks the
// float when the rescaled value is too large to be exact for sure.
func chainK(bits uint64, k int64, c uint8, dk, d int) (int64, uint8, bool) {
	if c == clsInt {
		if d == 0 {
			return k, c, true
		}
		if k > maxIntD[d] || k < -maxIntD[d] {
			return 0, c, false
		}
		return k * pow10i[d], c, true
	}
	if d > dk {
		if lim := exactScale[c] / pow10i[d-dk]; k < lim && k > -lim {
			return k * pow10i[d-dk], c, true
		}
	}
	dec, raw := decimal64, uint8(clsRaw64)
	if c == clsDec32 {
		dec, raw = decimal32, clsRaw32
	}
	if k, ok := dec(bits, d); ok {
		return k, c, true
	}
	return 0, raw, true
}

// valueStreams chooses the class, value and XOR streams' codings and the
// order of the integer chain.
func (e *DenseEncoder) valueStreams() {
	if e.classByte() == clsMixed {
		e.hCls.Reset()
		for _, c := range e.cls {
			e.hCls.Add(c)
		}
		e.ch[stCls] = e.choose(&e.hCls, &e.tbl[stCls], nil)
	}
	e.chooseOrder()
	if len(e.raws) >= 2 {
		e.xorStreams()
	}
}

// chooseOrder codes the chain as deltas or as deltas of deltas, whichever
// is cheaper in total (symbols, raw bits and header). The second order is
// priced only when its deltas are not clearly larger than the first's.
func (e *DenseEncoder) chooseOrder() {
	e.order = 0
	n := len(e.ks)
	if n < 2 {
		return
	}
	m0 := e.chainMoments(0)
	c0, x0 := e.chainCost(0, &e.hVal[0], &e.tbl[stVal], m0)
	e.ch[stVal] = c0
	if n < 3 {
		return
	}
	m1 := e.chainMoments(1)
	if m1.abs > 1.2*m0.abs {
		return
	}
	c1, x1 := e.chainCost(1, &e.hVal[1], &e.tbl[5], m1)
	x1 += 8 * float64(uvarintLen(entropy.Zigzag(e.ks[1]-e.ks[0])))
	if c1.bits+x1 < c0.bits+x0 {
		e.order, e.ch[stVal] = 1, c1
	}
}

// moments are the mean absolute value and root mean square of a stream's
// deltas, to aim the model search.
type moments struct{ abs, rms float64 }

func (e *DenseEncoder) chainDelta(order, j int) int64 {
	delta := e.ks[j] - e.ks[j-1]
	if order == 1 {
		delta -= e.ks[j-1] - e.ks[j-2]
	}
	return delta
}

func (e *DenseEncoder) chainMoments(order int) moments {
	var m moments
	for j := 1 + order; j < len(e.ks); j++ {
		f := float64(e.chainDelta(order, j))
		m.abs += math.Abs(f)
		m.rms += f * f
	}
	n := float64(len(e.ks) - 1 - order)
	return moments{m.abs / n, math.Sqrt(m.rms / n)}
}

func (e *DenseEncoder) chainCost(order int, h *entropy.Hist, tbl *entropy.Model, m moments) (streamChoice, float64) {
	h.Reset()
	var extra float64
	for j := 1 + order; j < len(e.ks); j++ {
		s, n, _ := entropy.Bucket(entropy.Zigzag(e.chainDelta(order, j)))
		h.Add(s)
		extra += float64(n)
	}
	return e.choose(h, tbl, &m), extra
}

func (e *DenseEncoder) xorStreams() {
	e.hLZ.Reset()
	e.hSig.Reset()
	for r := 1; r < len(e.raws); r++ {
		x := e.raws[r] ^ e.raws[r-1]
		if x == 0 {
			e.hLZ.Add(0)
			continue
		}
		lz, sig, _ := xorSymbols(x)
		e.hLZ.Add(lz)
		e.hSig.Add(sig)
	}
	e.ch[stLZ] = e.choose(&e.hLZ, &e.tbl[stLZ], nil)
	e.ch[stSig] = streamChoice{kind: streamConst}
	if e.hSig.N() > 0 {
		e.ch[stSig] = e.choose(&e.hSig, &e.tbl[stSig], nil)
	}
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
