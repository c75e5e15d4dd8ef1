package rowkey

import (
	"github.com/tsd-db/tsd/internal/encoding/entropy"
	"github.com/tsd-db/tsd/series"
)

// fillChain is the hot path for the common cell, every point in the
// integer chain with one class: the first two points come from the header
// through the generic code, then each batch decodes its symbols in one
// entropy call and rebuilds points in a tight loop.
func (it *DenseIter) fillChain(out []series.Point, cls uint8) int {
	n := min(len(out), it.n-it.i)
	b := 0
	for ; b < n && it.i < 2; b++ {
		if !it.next() {
			return b
		}
		out[b] = it.cur
	}
	for b < n && it.err == nil {
		m := min(n-b, denseBatch)
		b += it.chainBatch(out[b:b+m], cls)
	}
	return b
}

// chainBatch decodes points i >= 2 into out.
func (it *DenseIter) chainBatch(out []series.Point, cls uint8) int {
	m := len(out)
	regular, order2 := it.h0&hRegular != 0, it.h0&hOrder2 != 0
	uval, uts := it.sc.uval[:m], it.sc.uts[:m]
	if regular {
		it.dec.BucketedN(it.st[stVal], uval)
	} else {
		it.dec.BucketedPairs(it.st[stTS], it.st[stVal], uts, uval)
	}
	t, delta, k, kd := it.t, it.delta, it.k, it.kd
	kind, pow := chainKind(cls), pow10i[it.d]
	plainInt := cls == clsInt && pow == 1 // no division in the common case
	for q := range out {
		if !regular {
			delta += entropy.Unzigzag(uts[q])
		}
		t += delta
		if uint64(t) >= RowSpanMs || delta <= 0 {
			it.i += q
			it.fail("point %d at offset %d ms", it.i, t)
			return q
		}
		if order2 {
			kd += entropy.Unzigzag(uval[q])
			k += kd
		} else {
			k += entropy.Unzigzag(uval[q])
		}
		p := &out[q]
		p.T, p.Kind = it.base+t, kind
		switch {
		case plainInt:
			p.Bits = uint64(k)
		case cls == clsDec64:
			p.Bits = unDecimal64(k, it.d)
		case cls == clsDec32:
			p.Bits = unDecimal32(k, it.d)
		case k%pow != 0:
			it.i += q
			it.fail("integer %d not a multiple of 10^%d", k, it.d)
			return q
		default:
			p.Bits = uint64(k / pow)
		}
	}
	it.t, it.delta, it.k, it.kd = t, delta, k, kd
	it.i += m
	it.j += m
	return m
}

func chainKind(cls uint8) series.Kind {
	switch cls {
	case clsDec64:
		return series.Float64
	case clsDec32:
		return series.Float32
	}
	return series.Int
}
