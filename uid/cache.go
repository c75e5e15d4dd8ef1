package uid

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"
)

// cacheLine is the padding unit that keeps neighbouring shards' mutexes
// off one cache line.
const cacheLine = 64

// CacheStats count one cache's use. Hits and Misses count lookups;
// Evictions count entries dropped to stay within the size limit.
type CacheStats struct {
	Entries   int
	Limit     int
	Hits      uint64
	Misses    uint64
	Evictions uint64
}

func (s *CacheStats) add(o CacheStats) {
	s.Entries += o.Entries
	s.Limit += o.Limit
	s.Hits += o.Hits
	s.Misses += o.Misses
	s.Evictions += o.Evictions
}

// shardCount picks a power of two that keeps at least 16 entries per shard,
// at most 64 shards.
func shardCount(size int) int {
	n := 1
	for n < 64 && size/(n*2) >= 16 {
		n *= 2
	}
	return n
}

// shardCounters count one shard's use; atomic because hits happen under
// the read lock.
type shardCounters struct {
	hits, misses, evicted atomic.Uint64
}

func (sc *shardCounters) stats(live, limit int) CacheStats {
	return CacheStats{Entries: live, Limit: limit, Hits: sc.hits.Load(), Misses: sc.misses.Load(), Evictions: sc.evicted.Load()}
}

// cacheShard is one lock domain of a cache.
type cacheShard[K comparable, V any] struct {
	mu struct {
		sync.RWMutex
		m map[K]int32 // key → its slot in c
		c clock[K, V]
	}
	shardCounters
	_ [cacheLine]byte
}

// cache is one kind's name→ID or ID→name cache: CLOCK caches (clock.go)
// in shards picked by the top bits of the key's hash, which the caller
// computes (nameCache, idCache). A hit takes only its shard's read lock
// and allocates nothing; there is no global lock.
type cache[K comparable, V any] struct {
	shards []cacheShard[K, V]
	shift  uint // 64 - log2(len(shards)): a hash shifted right by it is a shard
}

func (c *cache[K, V]) init(size int) {
	n := shardCount(size)
	c.shards = make([]cacheShard[K, V], n)
	c.shift = 64
	for m := n; m > 1; m >>= 1 {
		c.shift--
	}
	per := (size + n - 1) / n
	for i := range c.shards {
		s := &c.shards[i].mu
		s.m = make(map[K]int32)
		s.c.init(per)
	}
}

// shard returns the shard of hash h; with one shard the shift is 64,
// which Go defines to give 0.
func (c *cache[K, V]) shard(h uint64) *cacheShard[K, V] { return &c.shards[h>>c.shift] }

// lookup finds k (of hash h), marks it used and counts a hit or a miss.
func (c *cache[K, V]) lookup(h uint64, k K) (V, bool) {
	s := c.shard(h)
	var v V
	s.mu.RLock()
	i, ok := s.mu.m[k]
	if ok {
		v = s.mu.c.hit(i)
	}
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	} else {
		s.misses.Add(1)
	}
	return v, ok
}

// peekAt is lookup without counting or marking.
func (c *cache[K, V]) peekAt(h uint64, k K) (V, bool) {
	s := c.shard(h)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if i, ok := s.mu.m[k]; ok {
		return s.mu.c.slots[i].val, true
	}
	var zero V
	return zero, false
}

// store sets k's value, evicting by the clock's hand when the shard is
// full.
func (c *cache[K, V]) store(h uint64, k K, v V) {
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[k]; ok {
		s.mu.c.slots[i].val = v
		return
	}
	i, old, evicted := s.mu.c.add(k, v)
	if evicted {
		delete(s.mu.m, old)
		s.evicted.Add(1)
	}
	s.mu.m[k] = i
}

// drop removes k.
func (c *cache[K, V]) drop(h uint64, k K) {
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[k]; ok {
		delete(s.mu.m, k)
		s.mu.c.remove(i)
	}
}

// reset drops every entry and keeps the counters.
func (c *cache[K, V]) reset() {
	for i := range c.shards {
		s := &c.shards[i].mu
		s.Lock()
		s.m = make(map[K]int32)
		s.c.init(s.c.limit)
		s.Unlock()
	}
}

func (c *cache[K, V]) stats() (st CacheStats) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		st.add(s.shardCounters.stats(s.mu.c.live, s.mu.c.limit))
		s.mu.RUnlock()
	}
	return st
}

// nameCache maps names to IDs for one kind, hashed by maphash.
type nameCache struct {
	cache[string, ID]
	seed maphash.Seed
}

func (c *nameCache) init(size int) {
	c.cache.init(size)
	c.seed = maphash.MakeSeed()
}

// get looks name up and counts a hit or a miss. It does not allocate: the
// look-up keeps no reference to its key, so the key is a string over
// name's bytes, not a copy (maphash hashes bytes and strings alike).
func (c *nameCache) get(name []byte) (ID, bool) {
	return c.lookup(maphash.Bytes(c.seed, name), unsafe.String(unsafe.SliceData(name), len(name)))
}

// peek is get without counting or marking.
func (c *nameCache) peek(name string) (ID, bool) {
	return c.peekAt(maphash.String(c.seed, name), name)
}

func (c *nameCache) put(name string, id ID) { c.store(maphash.String(c.seed, name), name, id) }

func (c *nameCache) remove(name string) { c.drop(maphash.String(c.seed, name), name) }

// idCache maps IDs to names for one kind, spreading sequential IDs over
// the shards by Fibonacci hashing.
type idCache struct{ cache[ID, string] }

func idHash(id ID) uint64 { return uint64(id) * 0x9E3779B97F4A7C15 }

func (c *idCache) get(id ID) (string, bool) { return c.lookup(idHash(id), id) }

func (c *idCache) put(id ID, name string) { c.store(idHash(id), id, name) }

func (c *idCache) remove(id ID) { c.drop(idHash(id), id) }
