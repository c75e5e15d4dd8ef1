package entropy

import "math/bits"

// NumSymbols is the size of the bucket alphabet: 8 exact small values and
// four sub-buckets for each bit length 4..64.
const NumSymbols = 252

// exactSymbols values below this are their own symbol.
const exactSymbols = 8

// symBase and symExtra give, per symbol, the smallest value of its bucket
// and how many raw low bits complete it.
var (
	symBase  [256]uint64
	symExtra [256]uint8
)

func init() {
	for s := 0; s < NumSymbols; s++ {
		symBase[s], symExtra[s] = bucketOf(s)
	}
}

func bucketOf(s int) (base uint64, extra uint8) {
	if s < exactSymbols {
		return uint64(s), 0
	}
	nb := uint((s-exactSymbols)/4 + 4)
	m2 := uint64((s - exactSymbols) % 4)
	return (4 | m2) << (nb - 3), uint8(nb - 3)
}

// Bucket maps u to its symbol and the raw low bits (extra of them, value
// rem) that complete it: values below 8 are exact; a larger value keeps its
// bit length and the two bits below its top bit in the symbol.
func Bucket(u uint64) (sym uint8, extra uint8, rem uint64) {
	if u < exactSymbols {
		return uint8(u), 0, 0
	}
	nb := bits.Len64(u)
	m2 := (u >> uint(nb-3)) & 3
	e := uint8(nb - 3)
	return uint8(exactSymbols + (nb-4)*4 + int(m2)), e, u & (1<<e - 1)
}

// SymbolBase returns the smallest value of the symbol's bucket.
func SymbolBase(s uint8) uint64 { return symBase[s] }

// SymbolExtra returns how many raw bits follow the symbol.
func SymbolExtra(s uint8) uint8 { return symExtra[s] }

// Zigzag maps a signed value to an unsigned one, small magnitudes first.
func Zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// Unzigzag inverts Zigzag.
func Unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
