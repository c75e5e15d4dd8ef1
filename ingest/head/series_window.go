package head

// windowSlots is the number of slots a window's span is cut into.
const windowSlots = 4

// seriesWindow counts the distinct series written in a sliding window of
// a fixed span (an hour, a day) and refuses a series new to it once it
// holds max. Time is cut into slots of span/windowSlots, aligned on the
// Unix epoch; the window is the last windowSlots+1 slots, the current one
// included. A series counts from its first write until the slot of its
// last write leaves the window, that is for more than span and at most
// span + span/windowSlots after its last write: "the last hour" means the
// last 60 to 75 minutes, "the last day" the last 24 to 30 hours.
//
// The count is exact: last maps each series hash to the slot of its last
// write, so a new series is never taken for a known one. (An earlier
// Bloom filter per slot let about 0.2 % of new series through uncounted
// once a window was full, which a client minting series could use to
// pass any limit.) Two series whose 64-bit hashes collide count as one;
// at a billion series that happens with probability about 3·10⁻². Memory
// grows with the series counted, never past max entries of about 20
// bytes each: entries whose slot left the window are swept when the slot
// changes, which costs one pass over the map per slot (a quarter hour for
// the hour, six hours for the day).
//
// live is the number of distinct series in the window, kept as the sum of
// n over the window's slots, where n counts the series whose last write
// fell in that slot: a series written again in a later slot moves its
// count there, so a slot that leaves the window takes away exactly the
// series not written since.
type seriesWindow struct {
	max  int
	step int64 // slot length, ms
	slot int64 // number of the current slot (Unix ms / step)
	live int
	n    [windowSlots + 1]int // by slot % len(n)
	last map[uint64]int64     // series hash -> slot of its last write
}

func newSeriesWindow(max int, spanMs, nowMs int64) *seriesWindow {
	w := &seriesWindow{max: max, step: spanMs / windowSlots, last: make(map[uint64]int64)}
	w.slot = nowMs / w.step
	return w
}

// advance moves the window to the slot of nowMs, emptying the slots that
// leave it and sweeping their series from last; it reports whether the
// slot changed. A clock that goes back changes nothing.
func (w *seriesWindow) advance(nowMs int64) bool {
	slot := nowMs / w.step
	if slot <= w.slot {
		return false
	}
	for s := w.slot + 1; s <= slot && s-w.slot <= int64(len(w.n)); s++ {
		i := s % int64(len(w.n))
		w.live -= w.n[i]
		w.n[i] = 0
	}
	w.slot = slot
	for h, s := range w.last {
		if !w.inWindow(s) {
			delete(w.last, h)
		}
	}
	return true
}

func (w *seriesWindow) inWindow(slot int64) bool { return slot > w.slot-int64(len(w.n)) }

// nextMs returns when the current slot ends.
func (w *seriesWindow) nextMs() int64 { return (w.slot + 1) * w.step }

// find returns the slot h was last written in, or -1 when the window does
// not hold h.
func (w *seriesWindow) find(h uint64) int64 {
	if s, ok := w.last[h]; ok && w.inWindow(s) {
		return s
	}
	return -1
}

// admits reports whether a series found in slot at (find) may be written:
// a known series always, a new one while the window has room.
func (w *seriesWindow) admits(at int64) bool { return at >= 0 || w.live < w.max }

// add records a write of the series h found in slot at (find).
func (w *seriesWindow) add(h uint64, at int64) {
	switch {
	case at == w.slot:
		return
	case at >= 0:
		w.n[at%int64(len(w.n))]-- // moves to the current slot
	default:
		w.live++
	}
	w.last[h] = w.slot
	w.n[w.slot%int64(len(w.n))]++
}
