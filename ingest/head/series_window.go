package head

import "math/bits"

// Bloom filter shape of a series window: bitsPerSeries bits per series a
// slot can hold and bloomProbes probes per series. At full capacity a
// lookup of a series never added answers "present" with probability
// about (1 - e^(-4/16))^4, 0.24 %, per slot.
const (
	bitsPerSeries = 16
	bloomProbes   = 4
)

// bloom is a fixed-size Bloom filter of 64-bit series hashes. Not safe
// for concurrent use (the limiter's mutex guards it).
type bloom struct {
	words []uint64
}

// minBloomWords is the smallest filter, 1,024 bits: a small limit
// (tsd.core.max_hourly_series=3 gives 48 bits) would otherwise share one
// word among its series, and a new series would pass as known about once
// in a thousand lookups (CI saw it). 128 bytes per slot cost nothing.
const minBloomWords = 16

func newBloom(capacity int) bloom {
	return bloom{words: make([]uint64, max((capacity*bitsPerSeries+63)/64, minBloomWords))}
}

// probe returns the i-th bit position of h: double hashing, the step
// odd so that the probes of one hash differ.
func (b *bloom) probe(h uint64, i int) (word int, mask uint64) {
	step := bits.RotateLeft64(h, 32) | 1
	pos := (h + uint64(i)*step) % uint64(len(b.words)*64)
	return int(pos / 64), 1 << (pos % 64)
}

func (b *bloom) has(h uint64) bool {
	for i := range bloomProbes {
		w, m := b.probe(h, i)
		if b.words[w]&m == 0 {
			return false
		}
	}
	return true
}

func (b *bloom) add(h uint64) {
	for i := range bloomProbes {
		w, m := b.probe(h, i)
		b.words[w] |= m
	}
}

func (b *bloom) reset() { clear(b.words) }

// windowSlots is the number of slots a window's span is cut into.
const windowSlots = 4

// seriesWindow counts the distinct series written in a sliding window of
// a fixed span (an hour, a day) and refuses a series new to it once it
// holds max. Time is cut into slots of span/windowSlots, aligned on the
// Unix epoch; each of the last windowSlots+1 slots (the current one
// included) has a Bloom filter of the series written in it. A series
// counts from its first write until the slot of its last write leaves the
// window, that is for more than span and at most span + span/windowSlots
// after its last write: "the last hour" means the last 60 to 75 minutes,
// "the last day" the last 24 to 30 hours. Memory is fixed by max:
// (windowSlots+1) × bitsPerSeries bits per series, 10 bytes.
//
// live is the number of distinct series in the window, kept as the sum of
// gens[i].n, where n counts the series whose latest write fell in slot i:
// a series written again in a later slot moves its count there, so a slot
// that leaves the window takes away exactly the series not written since.
// Bloom false positives make the count err low (a new series taken for a
// known one is let in uncounted): by the rate above at worst.
type seriesWindow struct {
	max  int
	step int64 // slot length, ms
	slot int64 // number of the current slot (Unix ms / step)
	cur  int   // gens index of the current slot
	live int
	gens [windowSlots + 1]windowGen
}

type windowGen struct {
	f bloom
	n int
}

func newSeriesWindow(max int, spanMs, nowMs int64) *seriesWindow {
	w := &seriesWindow{max: max, step: spanMs / windowSlots}
	w.slot = nowMs / w.step
	for i := range w.gens {
		w.gens[i].f = newBloom(max)
	}
	return w
}

// advance moves the window to the slot of nowMs, emptying the slots that
// leave it; it reports whether the slot changed. A clock that goes back
// changes nothing.
func (w *seriesWindow) advance(nowMs int64) bool {
	slot := nowMs / w.step
	if slot <= w.slot {
		return false
	}
	for range min(slot-w.slot, int64(len(w.gens))) {
		w.cur = (w.cur + 1) % len(w.gens)
		g := &w.gens[w.cur]
		w.live -= g.n
		g.n = 0
		g.f.reset()
	}
	w.slot = slot
	return true
}

// nextMs returns when the current slot ends.
func (w *seriesWindow) nextMs() int64 { return (w.slot + 1) * w.step }

// find returns the gens index of the latest slot h was written in, or -1.
func (w *seriesWindow) find(h uint64) int {
	for i := range len(w.gens) {
		g := (w.cur - i + len(w.gens)) % len(w.gens)
		if w.gens[g].f.has(h) {
			return g
		}
	}
	return -1
}

// admits reports whether a series found at gens index at (find) may be
// written: a known series always, a new one while the window has room.
func (w *seriesWindow) admits(at int) bool { return at >= 0 || w.live < w.max }

// add records a write of the series h found at gens index at (find).
func (w *seriesWindow) add(h uint64, at int) {
	switch {
	case at == w.cur:
		return
	case at >= 0 && w.gens[at].n > 0:
		w.gens[at].n-- // moves to the current slot
	default:
		w.live++ // new, or a false positive's empty slot: keep live = Σ n
	}
	g := &w.gens[w.cur]
	g.f.add(h)
	g.n++
}
