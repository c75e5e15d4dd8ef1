package uid

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
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

// nameShard is one lock domain of the name→ID cache.
type nameShard struct {
	mu struct {
		sync.RWMutex
		m map[string]int32
		c clock[string, ID]
	}
	shardCounters
	_ [cacheLine]byte
}

// nameCache maps names to IDs for one kind: sharded CLOCK caches. A hit
// takes only its shard's read lock; there is no global lock.
type nameCache struct {
	shards []nameShard
	mask   uint64
	seed   maphash.Seed
}

func (c *nameCache) init(size int) {
	n := shardCount(size)
	c.shards = make([]nameShard, n)
	c.mask = uint64(n - 1)
	c.seed = maphash.MakeSeed()
	per := (size + n - 1) / n
	for i := range c.shards {
		s := &c.shards[i].mu
		s.m = make(map[string]int32)
		s.c.init(per)
	}
}

func (c *nameCache) shardBytes(name []byte) *nameShard {
	return &c.shards[maphash.Bytes(c.seed, name)&c.mask]
}

// get looks name up and counts a hit or a miss. It does not allocate.
func (c *nameCache) get(name []byte) (ID, bool) {
	s := c.shardBytes(name)
	var id ID
	s.mu.RLock()
	i, ok := s.mu.m[string(name)]
	if ok {
		id = s.mu.c.hit(i)
	}
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	} else {
		s.misses.Add(1)
	}
	return id, ok
}

// peek is get without counting or marking.
func (c *nameCache) peek(name string) (ID, bool) {
	s := &c.shards[maphash.String(c.seed, name)&c.mask]
	s.mu.RLock()
	defer s.mu.RUnlock()
	if i, ok := s.mu.m[name]; ok {
		return s.mu.c.slots[i].val, true
	}
	return 0, false
}

func (c *nameCache) put(name string, id ID) {
	s := &c.shards[maphash.String(c.seed, name)&c.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[name]; ok {
		s.mu.c.slots[i].val = id
		return
	}
	i, old, evicted := s.mu.c.add(name, id)
	if evicted {
		delete(s.mu.m, old)
		s.evicted.Add(1)
	}
	s.mu.m[name] = i
}

func (c *nameCache) remove(name string) {
	s := &c.shards[maphash.String(c.seed, name)&c.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[name]; ok {
		delete(s.mu.m, name)
		s.mu.c.remove(i)
	}
}

// reset drops every entry and keeps the counters.
func (c *nameCache) reset() {
	for i := range c.shards {
		s := &c.shards[i].mu
		s.Lock()
		s.m = make(map[string]int32)
		s.c.init(s.c.limit)
		s.Unlock()
	}
}

func (c *nameCache) stats() (st CacheStats) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		st.add(s.shardCounters.stats(s.mu.c.live, s.mu.c.limit))
		s.mu.RUnlock()
	}
	return st
}

// idShard is one lock domain of the ID→name cache.
type idShard struct {
	mu struct {
		sync.RWMutex
		m map[ID]int32
		c clock[ID, string]
	}
	shardCounters
	_ [cacheLine]byte
}

// idCache maps IDs to names for one kind, sharded like nameCache.
type idCache struct {
	shards []idShard
	shift  uint
}

func (c *idCache) init(size int) {
	n := shardCount(size)
	c.shards = make([]idShard, n)
	c.shift = 64
	for m := n; m > 1; m >>= 1 {
		c.shift--
	}
	per := (size + n - 1) / n
	for i := range c.shards {
		s := &c.shards[i].mu
		s.m = make(map[ID]int32)
		s.c.init(per)
	}
}

// shard spreads sequential IDs over shards by Fibonacci hashing.
func (c *idCache) shard(id ID) *idShard {
	if c.shift == 64 {
		return &c.shards[0]
	}
	return &c.shards[(uint64(id)*0x9E3779B97F4A7C15)>>c.shift]
}

func (c *idCache) get(id ID) (string, bool) {
	s := c.shard(id)
	var name string
	s.mu.RLock()
	i, ok := s.mu.m[id]
	if ok {
		name = s.mu.c.hit(i)
	}
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	} else {
		s.misses.Add(1)
	}
	return name, ok
}

func (c *idCache) put(id ID, name string) {
	s := c.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[id]; ok {
		s.mu.c.slots[i].val = name
		return
	}
	i, old, evicted := s.mu.c.add(id, name)
	if evicted {
		delete(s.mu.m, old)
		s.evicted.Add(1)
	}
	s.mu.m[id] = i
}

func (c *idCache) remove(id ID) {
	s := c.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[id]; ok {
		delete(s.mu.m, id)
		s.mu.c.remove(i)
	}
}

func (c *idCache) reset() {
	for i := range c.shards {
		s := &c.shards[i].mu
		s.Lock()
		s.m = make(map[ID]int32)
		s.c.init(s.c.limit)
		s.Unlock()
	}
}

func (c *idCache) stats() (st CacheStats) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		st.add(s.shardCounters.stats(s.mu.c.live, s.mu.c.limit))
		s.mu.RUnlock()
	}
	return st
}
