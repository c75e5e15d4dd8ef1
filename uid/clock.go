package uid

import "sync/atomic"

// clock is the replacement policy and slot storage of one cache shard:
// CLOCK (second chance), the LRU approximation that lets a hit take only a
// read lock. A hit sets its slot's reference bit; when the shard is full the
// hand sweeps, clearing set bits, and evicts the first slot whose bit is
// clear, so an entry used since the hand last passed survives. Slots are
// indexes into one slice: no pointer per entry for the GC to trace.
//
// The owning shard's lock guards everything but the reference bits, which
// readers set under the read lock.
type clock[K comparable, V any] struct {
	slots []clockSlot[K, V]
	free  []int32 // removed slots, reused first
	hand  int32
	limit int // most live slots
	live  int
}

type clockSlot[K comparable, V any] struct {
	key  K
	val  V
	ref  atomic.Bool
	used bool
}

func (c *clock[K, V]) init(limit int) {
	c.slots, c.free, c.hand, c.limit, c.live = nil, nil, 0, limit, 0
}

// hit reads slot i and marks it recently used; safe under the read lock.
func (c *clock[K, V]) hit(i int32) V {
	s := &c.slots[i]
	if !s.ref.Load() { // skip the store when set: hot slots stay read-only
		s.ref.Store(true)
	}
	return s.val
}

// add stores a new entry and returns its slot; when the shard is full it
// evicts by the hand and reports the evicted key.
func (c *clock[K, V]) add(key K, val V) (i int32, evicted K, didEvict bool) {
	switch {
	case len(c.free) > 0:
		i = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	case c.live < c.limit:
		c.slots = append(c.slots, clockSlot[K, V]{})
		i = int32(len(c.slots) - 1)
	default:
		i = c.sweep()
		evicted, didEvict = c.slots[i].key, true
		c.live--
	}
	s := &c.slots[i]
	s.key, s.val, s.used = key, val, true
	s.ref.Store(false)
	c.live++
	return i, evicted, didEvict
}

// sweep advances the hand to the first used slot whose bit is clear,
// clearing bits on the way. It ends within two turns.
func (c *clock[K, V]) sweep() int32 {
	for {
		i := c.hand
		c.hand++
		if int(c.hand) == len(c.slots) {
			c.hand = 0
		}
		s := &c.slots[i]
		if s.used && !s.ref.Swap(false) {
			return i
		}
	}
}

// remove frees slot i.
func (c *clock[K, V]) remove(i int32) {
	s := &c.slots[i]
	var zk K
	var zv V
	s.key, s.val, s.used = zk, zv, false
	s.ref.Store(false)
	c.free = append(c.free, i)
	c.live--
}
