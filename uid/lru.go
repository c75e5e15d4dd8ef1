package uid

// lruList is the recency order and slot storage of one cache shard. Slots
// are indexes into one slice, so an entry costs no pointer for the GC and a
// full shard reuses the least recent slot in place. It is not safe for
// concurrent use: the owning shard's mutex guards it.
type lruList[K comparable, V any] struct {
	slots []lruSlot[K, V]
	head  int32 // most recent; -1 when empty
	tail  int32 // least recent; -1 when empty
	free  int32 // chain of removed slots through next; -1 when none
	limit int   // most live slots
	live  int
}

type lruSlot[K comparable, V any] struct {
	key        K
	val        V
	prev, next int32
}

func (l *lruList[K, V]) init(limit int) {
	*l = lruList[K, V]{head: -1, tail: -1, free: -1, limit: limit}
}

func (l *lruList[K, V]) unlink(i int32) {
	s := &l.slots[i]
	if s.prev >= 0 {
		l.slots[s.prev].next = s.next
	} else {
		l.head = s.next
	}
	if s.next >= 0 {
		l.slots[s.next].prev = s.prev
	} else {
		l.tail = s.prev
	}
}

func (l *lruList[K, V]) pushFront(i int32) {
	s := &l.slots[i]
	s.prev, s.next = -1, l.head
	if l.head >= 0 {
		l.slots[l.head].prev = i
	}
	l.head = i
	if l.tail < 0 {
		l.tail = i
	}
}

// touch marks slot i most recently used.
func (l *lruList[K, V]) touch(i int32) {
	if l.head == i {
		return
	}
	l.unlink(i)
	l.pushFront(i)
}

// add stores a new entry and returns its slot. When the list is full it
// reuses the least recent slot and reports the key it evicted.
func (l *lruList[K, V]) add(key K, val V) (i int32, evicted K, didEvict bool) {
	switch {
	case l.free >= 0:
		i = l.free
		l.free = l.slots[i].next
		l.live++
	case l.live < l.limit:
		l.slots = append(l.slots, lruSlot[K, V]{})
		i = int32(len(l.slots) - 1)
		l.live++
	default:
		i = l.tail
		evicted, didEvict = l.slots[i].key, true
		l.unlink(i)
	}
	l.slots[i].key, l.slots[i].val = key, val
	l.pushFront(i)
	return i, evicted, didEvict
}

// remove frees slot i.
func (l *lruList[K, V]) remove(i int32) {
	l.unlink(i)
	var zero lruSlot[K, V]
	l.slots[i] = zero
	l.slots[i].next = l.free
	l.free = i
	l.live--
}
