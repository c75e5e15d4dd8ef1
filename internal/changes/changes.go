package changes

import "sync/atomic"

// Slots is the number of hour slots: about 170 days before two hours
// share one.
const Slots = 4096

const hourMs = 3600 * 1000

// Tracker records changes to points by hour. The zero value is ready and
// reports no change; it is safe for concurrent use.
type Tracker struct {
	gen   atomic.Uint64
	all   atomic.Uint64 // the generation of the last MarkAll
	hours [Slots]atomic.Uint64
	moved [Slots]atomic.Uint64 // MarkMoved's marks, by hour
}

// Gen returns the current generation, to pass to Changed later.
func (t *Tracker) Gen() uint64 { return t.gen.Load() }

// Mark records a change to points in [mint, maxt] (milliseconds), made
// visible to readers before the call.
func (t *Tracker) Mark(mint, maxt int64) { t.mark(&t.hours, mint, maxt) }

// MarkMoved records that points in [mint, maxt] are kept elsewhere than
// before (flushed from the head to the store, or a stored row folded)
// with the same values: it changes no answer, only what a reader of the
// store's rows may have cached (ChangedOrMoved).
func (t *Tracker) MarkMoved(mint, maxt int64) { t.mark(&t.moved, mint, maxt) }

func (t *Tracker) mark(slots *[Slots]atomic.Uint64, mint, maxt int64) {
	g := t.gen.Add(1)
	h0, h1 := hour(mint), hour(maxt)
	if h1 < h0 {
		return
	}
	if h1-h0 >= Slots-1 {
		raise(&t.all, g)
		return
	}
	for h := h0; h <= h1; h++ {
		raise(&slots[slot(h)], g)
	}
}

// MarkAll records a change that may touch any point.
func (t *Tracker) MarkAll() { raise(&t.all, t.gen.Add(1)) }

// Changed reports whether a change to points in [mint, maxt] may have
// been marked after gen was taken.
func (t *Tracker) Changed(gen uint64, mint, maxt int64) bool {
	return t.since(gen, mint, maxt, false)
}

// ChangedOrMoved reports whether a change or a move (MarkMoved) of
// points in [mint, maxt] may have been marked after gen was taken: what
// a reader that cached the store's rows themselves asks.
func (t *Tracker) ChangedOrMoved(gen uint64, mint, maxt int64) bool {
	return t.since(gen, mint, maxt, true)
}

func (t *Tracker) since(gen uint64, mint, maxt int64, moved bool) bool {
	if t.all.Load() > gen {
		return true
	}
	h0, h1 := hour(mint), hour(maxt)
	if h1-h0 >= Slots-1 {
		h0, h1 = 0, Slots-1
	}
	for h := h0; h <= h1; h++ {
		s := slot(h)
		if t.hours[s].Load() > gen || moved && t.moved[s].Load() > gen {
			return true
		}
	}
	return false
}

// raise sets a to g unless it already holds more.
func raise(a *atomic.Uint64, g uint64) {
	for {
		old := a.Load()
		if old >= g || a.CompareAndSwap(old, g) {
			return
		}
	}
}

// hour is the hour holding ms, rounded down also before 1970.
func hour(ms int64) int64 {
	h := ms / hourMs
	if ms%hourMs < 0 {
		h--
	}
	return h
}

func slot(h int64) int { return int(uint64(h) % Slots) }
