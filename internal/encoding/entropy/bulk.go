package entropy

// Stream is a source of bucketed values: a model, or the constant symbol
// Const when M is nil (whose raw bits still come from the stream).
type Stream struct {
	M     *Model
	Const uint8
}

// BucketedN decodes len(out) bucketed values of s into out. It is the
// decoder's hot loop: the state stays in registers.
func (d *Decoder) BucketedN(s Stream, out []uint64) {
	if s.M == nil {
		for i := range out {
			out[i] = d.BucketedConst(s.Const)
		}
		return
	}
	x, pos, src, m := d.x, d.pos, d.src, s.M
	dec, mask, shift := m.dec, m.mask, m.M
	for i := range out {
		e := dec[x&mask]
		x = uint64(e>>12&0xfff)*(x>>shift) + uint64(e&0xfff)
		for x < ransL && pos < len(src) {
			x, pos = x<<8|uint64(src[pos]), pos+1
		}
		sym := uint8(e >> 24)
		u, n := symBase[sym], symExtra[sym]
		if n > 0 {
			if n > RawChunk {
				d.x, d.pos = x, pos
				out[i] = u | d.Bits(n)
				x, pos = d.x, d.pos
				continue
			}
			u |= x & (1<<n - 1)
			x >>= n
			for x < ransL && pos < len(src) {
				x, pos = x<<8|uint64(src[pos]), pos+1
			}
		}
		out[i] = u
	}
	d.x, d.pos = x, pos
}

// BucketedPairs decodes len(a) pairs of values, a[i] from s1 then b[i]
// from s2 (b must be as long as a).
func (d *Decoder) BucketedPairs(s1, s2 Stream, a, b []uint64) {
	b = b[:len(a)]
	for i := range a {
		a[i] = d.bucketedOf(s1)
		b[i] = d.bucketedOf(s2)
	}
}

func (d *Decoder) bucketedOf(s Stream) uint64 {
	if s.M != nil {
		return d.Bucketed(s.M)
	}
	return d.BucketedConst(s.Const)
}
