package rowkey

import (
	"math"
	"math/bits"
)

// MaxDensePoints is the most points one dense cell holds. A writer with
// more points for one row (finer than about 55 ms) writes several cells.
// The bound also caps what a corrupt cell can make a reader allocate.
const MaxDensePoints = 1 << 16

// Value classes of a dense point (doc.go). Int and the two decimal classes
// form the integer chain; the raw classes form the XOR chain.
const (
	clsInt   = 0
	clsDec32 = 1
	clsDec64 = 2
	clsRaw64 = 3
	clsRaw32 = 4
	numCls   = 5
	clsMixed = 7
)

// Header byte h0 bits.
const (
	hClassMask = 0x07
	hOrder2    = 0x08
	hRegular   = 0x10
	// hStartOne marks a cell whose rANS stream starts its state at 1
	// (entropy.Decoder.Init); cells written before it have the bit clear
	// and a state that starts at 2^23 (InitLegacy), about 3 bytes more.
	hStartOne = 0x20
	hReserved = 0xC0
)

// Stream descriptor kinds.
const (
	streamConst = 0
	streamTable = 1
	streamParam = 2
)

// maxDecimals is the largest decimal exponent d of a decimal class.
const maxDecimals = 15

var (
	pow10   [maxDecimals + 1]float64
	pow10f  [maxDecimals + 1]float32
	pow10i  [maxDecimals + 1]int64
	maxIntD [maxDecimals + 1]int64 // largest |v| with v*10^d in int64
)

func init() {
	p := int64(1)
	for d := 0; d <= maxDecimals; d++ {
		pow10i[d], pow10[d], pow10f[d] = p, float64(p), float32(p)
		maxIntD[d] = math.MaxInt64 / p
		p *= 10
	}
}

func inChain(c uint8) bool { return c <= clsDec64 }

// hasDecimals reports whether a header of class cls carries the byte d.
func hasDecimals(cls uint8) bool { return cls == clsDec32 || cls == clsDec64 || cls == clsMixed }

// decimal64 returns k with float64(k)/10^d bit-identical to bits.
func decimal64(bits uint64, d int) (int64, bool) {
	x := math.Float64frombits(bits) * pow10[d]
	if !(x > -9e18 && x < 9e18) {
		return 0, false
	}
	k := int64(math.Round(x))
	return k, math.Float64bits(float64(k)/pow10[d]) == bits
}

// decimal32 returns k with float32(k)/10^d bit-identical to the float32
// whose widening is bits.
func decimal32(bits uint64, d int) (int64, bool) {
	f := float32(math.Float64frombits(bits))
	x := float64(f) * pow10[d]
	if !(x > -9e18 && x < 9e18) {
		return 0, false
	}
	k := int64(math.Round(x))
	return k, math.Float32bits(float32(k)/pow10f[d]) == math.Float32bits(f)
}

// chainValue maps a chain point to its float64 bits or int from k.
func unDecimal64(k int64, d uint8) uint64 { return math.Float64bits(float64(k) / pow10[d]) }

func unDecimal32(k int64, d uint8) uint64 {
	return math.Float64bits(float64(float32(k) / pow10f[d]))
}

// raw32 is the XOR-chain representation of a Float32 point.
func raw32(bits uint64) uint64 {
	return uint64(math.Float32bits(float32(math.Float64frombits(bits))))
}

func unRaw32(r uint64) uint64 {
	return math.Float64bits(float64(math.Float32frombits(uint32(r))))
}

// xorSymbols splits a non-zero XOR of two raw values into the leading-zero
// symbol (1+lz), the significant-length symbol (sig-1) and the sig-1 bits
// below the leading one.
func xorSymbols(x uint64) (lzSym, sigSym uint8, mid uint64) {
	lz, tz := bits.LeadingZeros64(x), bits.TrailingZeros64(x)
	sig := 64 - lz - tz
	return uint8(1 + lz), uint8(sig - 1), (x >> uint(tz)) & (1<<uint(sig-1) - 1)
}
