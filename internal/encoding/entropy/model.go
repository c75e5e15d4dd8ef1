package entropy

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

const (
	// ParamBits is log2 of a parametric model's total frequency.
	ParamBits = 12
	// TableBits is log2 of a transmitted table's total frequency: small
	// enough that building its decode table costs little per row.
	TableBits = 10
	// NumParametric is the number of built-in models: 4 families x 64 scales.
	NumParametric = 256
)

// Model is a static distribution over the bucket alphabet, shared by the
// encoder and the decoder. A symbol with Freq 0 cannot be coded.
type Model struct {
	// M is log2 of the total frequency.
	M    uint8
	mask uint64
	// Freq and Cum are each symbol's frequency and cumulative start.
	Freq [256]uint16
	Cum  [256]uint16
	// dec maps a state slot to symbol<<24 | freq<<12 | (slot-cum).
	dec []uint32
	// cost is each symbol's code length in bits (+Inf when Freq is 0).
	cost [256]float32
}

// build fills Cum from Freq, which must sum to 1<<M, then either the
// decode table (dec, reusing its capacity) or the encoder's costs.
func (m *Model) build(dec bool) {
	total := 1 << m.M
	m.mask = uint64(total - 1)
	if dec && cap(m.dec) < total {
		m.dec = make([]uint32, total)
	}
	m.dec = m.dec[:0]
	if dec {
		m.dec = m.dec[:total]
	}
	c := 0
	for s := 0; s < 256; s++ {
		f := int(m.Freq[s])
		m.Cum[s] = uint16(c)
		for k := 0; dec && k < f; k++ {
			m.dec[c+k] = uint32(s)<<24 | uint32(f)<<12 | uint32(k)
		}
		if !dec {
			m.cost[s] = inf32
			if f > 0 {
				m.cost[s] = float32(m.M) - log2Tab()[f]
			}
		}
		c += f
	}
}

// Hist counts symbols of one stream and remembers which occur.
type Hist struct {
	Count [256]uint32
	used  []uint8
	n     uint32
}

// Reset empties the histogram, keeping capacity.
func (h *Hist) Reset() {
	for _, s := range h.used {
		h.Count[s] = 0
	}
	h.used, h.n = h.used[:0], 0
}

// Add counts one symbol.
func (h *Hist) Add(s uint8) {
	if h.Count[s] == 0 {
		h.used = append(h.used, s)
	}
	h.Count[s]++
	h.n++
}

// N returns the number of symbols counted.
func (h *Hist) N() int { return int(h.n) }

// Distinct returns the number of distinct symbols.
func (h *Hist) Distinct() int { return len(h.used) }

// Only returns the single symbol of a histogram with one distinct symbol.
func (h *Hist) Only() uint8 { return h.used[0] }

// Cost returns the bits m needs for the counted symbols (+Inf if one of
// them has no code). It prices built-in and Normalize'd models; a model
// read by ParseTable is for decoding and has no costs.
func (m *Model) Cost(h *Hist) float64 {
	var c float64
	for _, s := range h.used {
		c += float64(h.Count[s]) * float64(m.cost[s])
	}
	return c
}

var inf32 = float32(math.Inf(1))

// log2Tab holds log2(f) for every frequency a model can hold.
var log2Tab = sync.OnceValue(func() *[1 << ParamBits]float32 {
	var t [1 << ParamBits]float32
	for f := 1; f < len(t); f++ {
		t[f] = float32(math.Log2(float64(f)))
	}
	return &t
})

var (
	paramOnce   [NumParametric]sync.Once
	paramModels [NumParametric]Model
)

// Parametric returns built-in model id (family id>>6, scale id&63); see
// doc.go. The model is shared and read-only.
func Parametric(id uint8) *Model {
	m := &paramModels[id]
	paramOnce[id].Do(func() {
		m.M = ParamBits
		for s, f := range paramFreqs[id] {
			m.Freq[s] = f
		}
		m.build(false)
		m.build(true)
	})
	return m
}

// BestParametric returns the built-in model that codes h in the fewest
// bits. It searches each family's scales coarse to fine (a family's cost
// is close to unimodal in its scale), pricing about 80 of the 256 models.
func BestParametric(h *Hist) (id uint8, bits float64) {
	bits = math.Inf(1)
	for fam := 0; fam < NumParametric; fam += 64 {
		best, bestBits := fam, math.Inf(1)
		for j := 2; j < 64; j += 4 {
			if c := parametricCost(uint8(fam+j), h); c < bestBits {
				best, bestBits = fam+j, c
			}
		}
		for j := max(fam, best-2); j <= min(fam+63, best+2); j++ {
			if c := parametricCost(uint8(j), h); c < bestBits {
				best, bestBits = j, c
			}
		}
		if bestBits < bits {
			id, bits = uint8(best), bestBits
		}
	}
	return id, bits
}

// BestParametricNear is BestParametric guided by the data's moments: it
// prices only the scales within a factor of about 1.7 of each family's
// moment estimate (Gaussian: rms; Laplace: mean absolute value, divided by
// the non-spike mass for the spiked families), 28 models in all.
func BestParametricNear(h *Hist, absMean, rms float64) (id uint8, bits float64) {
	bits = math.Inf(1)
	for fam := 0; fam < NumParametric/64; fam++ {
		scale := absMean / (1 - spikeMass[fam])
		if fam == 0 {
			scale = rms
		}
		j0 := int(math.Round(4 * (math.Log2(scale) + 2)))
		for j := max(0, min(j0, 63)-3); j <= min(63, max(j0, 0)+3); j++ {
			if c := parametricCost(uint8(fam*64+j), h); c < bits {
				id, bits = uint8(fam*64+j), c
			}
		}
	}
	return id, bits
}

// spikeMass is each family's extra probability at zero.
var spikeMass = [4]float64{0, 0, 0.5, 0.9}

// parametricCost prices h under a model without building its decode table.
func parametricCost(id uint8, h *Hist) float64 {
	costs := paramCosts()
	var c float64
	for _, s := range h.used {
		c += float64(h.Count[s]) * float64(costs[id][s])
	}
	return c
}

var paramCosts = sync.OnceValue(func() *[NumParametric][256]float32 {
	var t [NumParametric][256]float32
	for id := range t {
		for s := range t[id] {
			t[id][s] = float32(math.Inf(1))
			if s < len(paramFreqs[id]) && paramFreqs[id][s] > 0 {
				t[id][s] = float32(ParamBits - math.Log2(float64(paramFreqs[id][s])))
			}
		}
	}
	return &t
})

// Normalize sets m to a table model (TableBits) fitted to h, which must
// have at least two distinct symbols. It fills what encoding needs; only
// ParseTable builds the decode table.
func (m *Model) Normalize(h *Hist) {
	const total = 1 << TableBits
	m.M = TableBits
	m.Freq = [256]uint16{}
	sum, big := 0, h.used[0]
	for _, s := range h.used {
		f := max(1, int(math.Round(float64(h.Count[s])*total/float64(h.n))))
		m.Freq[s] = uint16(f)
		sum += f
		if h.Count[s] > h.Count[big] {
			big = s
		}
	}
	m.fixSum(sum, total, big)
	m.build(false)
}

// fixSum moves the rounding error onto the largest symbols, never below 1.
func (m *Model) fixSum(sum, total int, big uint8) {
	for sum != total {
		s := big
		if sum > total && m.Freq[s] <= 1 {
			s = m.largest()
		}
		if sum < total {
			m.Freq[s]++
			sum++
		} else {
			m.Freq[s]--
			sum--
		}
	}
}

func (m *Model) largest() uint8 {
	var b uint8
	for s := range m.Freq {
		if m.Freq[s] > m.Freq[b] {
			b = uint8(s)
		}
	}
	return b
}

// TableBytes returns the size of m's serialised table.
func (m *Model) TableBytes() int {
	lo, hi := m.span()
	n := 2
	for s := lo; s <= hi; s++ {
		n += uvarintLen(uint64(m.Freq[s]))
	}
	return n
}

func (m *Model) span() (lo, hi int) {
	lo, hi = 255, 0
	for s, f := range m.Freq {
		if f > 0 {
			lo, hi = min(lo, s), max(hi, s)
		}
	}
	return lo, hi
}

// AppendTable appends the table: first symbol, last symbol, then each
// frequency in between as a uvarint.
func (m *Model) AppendTable(dst []byte) []byte {
	lo, hi := m.span()
	dst = append(dst, byte(lo), byte(hi))
	for s := lo; s <= hi; s++ {
		dst = binary.AppendUvarint(dst, uint64(m.Freq[s]))
	}
	return dst
}

// ParseTable reads a table written by AppendTable into m and returns the
// rest of src.
func (m *Model) ParseTable(src []byte) ([]byte, error) {
	const total = 1 << TableBits
	if len(src) < 2 || src[0] > src[1] || int(src[1]) >= NumSymbols {
		return nil, fmt.Errorf("%w: bad table range", ErrCorrupt)
	}
	lo, hi := int(src[0]), int(src[1])
	src = src[2:]
	m.M, m.Freq = TableBits, [256]uint16{}
	sum, nz := 0, 0
	for s := lo; s <= hi; s++ {
		f, n := binary.Uvarint(src)
		if n <= 0 || f >= total {
			return nil, fmt.Errorf("%w: bad table frequency", ErrCorrupt)
		}
		src = src[n:]
		m.Freq[s], sum = uint16(f), sum+int(f)
		if f > 0 {
			nz++
		}
	}
	if sum != total || nz < 2 {
		return nil, fmt.Errorf("%w: table frequencies sum to %d", ErrCorrupt, sum)
	}
	m.build(true)
	return src, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
