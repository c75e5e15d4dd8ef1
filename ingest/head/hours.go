package head

import (
	"slices"
	"sync"
	"sync/atomic"
)

// hourShards is the number of hour-index shards, a power of two.
const hourShards = 64

// hourIndex is the flusher's due list: per hour base, the series with an
// open row there, so a flush round looks only at hours that can be due (or
// at the oldest hours, under memory pressure) instead of every series.
//
// Invariant: every row in a series' rows has exactly one entry. A flush
// takes the entries of the hours it looks at and puts back those of rows
// it leaves in the head; a row being written (in flushing) has none.
//
// Lock order: a series' lock, then a shard's lock; nothing takes a series'
// lock while holding a shard's.
type hourIndex struct {
	shards [hourShards]hourShard
	// listed counts the rows entered that a flush has not seen: new rows
	// and reinstated ones (list), not the entries a flush gives back
	// (add). It moves after the entry is in its shard, so a flush that
	// read it before taking entries either takes the entry or sees the
	// count move (Head.ListedRows).
	listed atomic.Uint64
}

// hourShard holds the entries of the series whose ref falls in it, padded
// so that two shards' locks never share a cache line.
type hourShard struct {
	mu sync.Mutex
	m  map[int64][]*memSeries // guarded by mu: base → series
	_  [64 - 16]byte
}

// HourEntry names the open row of a series at an hour: what the flusher
// takes from the hour index (TakeHours) to detach the row.
type HourEntry struct {
	s    *memSeries
	base int64
}

// Base returns the first millisecond of the entry's hour.
func (e HourEntry) Base() int64 { return e.base }

func (x *hourIndex) shard(s *memSeries) *hourShard {
	return &x.shards[uint64(s.ref)&(hourShards-1)]
}

// add records the new row of s at base.
func (x *hourIndex) add(s *memSeries, base int64) {
	sh := x.shard(s)
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[int64][]*memSeries)
	}
	sh.m[base] = append(sh.m[base], s)
	sh.mu.Unlock()
}

// list records a row of s at base that no flush has looked at: a new
// row, or one put back after its write.
func (x *hourIndex) list(s *memSeries, base int64) {
	x.add(s, base)
	x.listed.Add(1)
}

// take removes and appends to dst the entries of every hour base for which
// pick is true.
func (x *hourIndex) take(dst []HourEntry, pick func(base int64) bool) []HourEntry {
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.Lock()
		for base, ss := range sh.m {
			if !pick(base) {
				continue
			}
			for _, s := range ss {
				dst = append(dst, HourEntry{s, base})
			}
			delete(sh.m, base)
		}
		sh.mu.Unlock()
	}
	return dst
}

// oldest returns the lowest hour base (Unix milliseconds) with an entry;
// ok is false when the index is empty.
func (x *hourIndex) oldest() (base int64, ok bool) {
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.Lock()
		for b := range sh.m {
			if !ok || b < base {
				base, ok = b, true
			}
		}
		sh.mu.Unlock()
	}
	return base, ok
}

// len returns the number of entries (open rows).
func (x *hourIndex) len() int {
	n := 0
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.Lock()
		for _, ss := range sh.m {
			n += len(ss)
		}
		sh.mu.Unlock()
	}
	return n
}

// sortEntries orders entries by hour, then series, so a flush writes the
// oldest rows first and keys of one hour together.
func sortEntries(es []HourEntry) {
	slices.SortFunc(es, func(a, b HourEntry) int {
		if c := cmpInt64(a.base, b.base); c != 0 {
			return c
		}
		return cmpInt64(int64(a.s.ref), int64(b.s.ref))
	})
}
