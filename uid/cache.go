package uid

import (
	"hash/maphash"
	"sync"
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

// nameShard is one lock domain of the name→ID cache.
type nameShard struct {
	mu struct {
		sync.Mutex
		m       map[string]int32
		l       lruList[string, ID]
		hits    uint64
		misses  uint64
		evicted uint64
	}
	_ [cacheLine]byte
}

// nameCache maps names to IDs for one kind: a sharded LRU. A lookup locks
// only its shard; there is no global lock.
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
		s.l.init(per)
	}
}

func (c *nameCache) shardBytes(name []byte) *nameShard {
	return &c.shards[maphash.Bytes(c.seed, name)&c.mask]
}

// get looks name up and counts a hit or a miss. It does not allocate.
func (c *nameCache) get(name []byte) (ID, bool) {
	s := c.shardBytes(name)
	s.mu.Lock()
	i, ok := s.mu.m[string(name)]
	if !ok {
		s.mu.misses++
		s.mu.Unlock()
		return 0, false
	}
	s.mu.hits++
	s.mu.l.touch(i)
	id := s.mu.l.slots[i].val
	s.mu.Unlock()
	return id, true
}

// peek is get without counting or reordering.
func (c *nameCache) peek(name string) (ID, bool) {
	s := &c.shards[maphash.String(c.seed, name)&c.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[name]; ok {
		return s.mu.l.slots[i].val, true
	}
	return 0, false
}

func (c *nameCache) put(name string, id ID) {
	s := &c.shards[maphash.String(c.seed, name)&c.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[name]; ok {
		s.mu.l.slots[i].val = id
		s.mu.l.touch(i)
		return
	}
	i, old, evicted := s.mu.l.add(name, id)
	if evicted {
		delete(s.mu.m, old)
		s.mu.evicted++
	}
	s.mu.m[name] = i
}

func (c *nameCache) remove(name string) {
	s := &c.shards[maphash.String(c.seed, name)&c.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[name]; ok {
		delete(s.mu.m, name)
		s.mu.l.remove(i)
	}
}

// reset drops every entry and keeps the counters.
func (c *nameCache) reset() {
	for i := range c.shards {
		s := &c.shards[i].mu
		s.Lock()
		s.m = make(map[string]int32)
		s.l.init(s.l.limit)
		s.Unlock()
	}
}

func (c *nameCache) stats() (st CacheStats) {
	for i := range c.shards {
		s := &c.shards[i].mu
		s.Lock()
		st.add(CacheStats{Entries: s.l.live, Limit: s.l.limit, Hits: s.hits, Misses: s.misses, Evictions: s.evicted})
		s.Unlock()
	}
	return st
}

// idShard is one lock domain of the ID→name cache.
type idShard struct {
	mu struct {
		sync.Mutex
		m       map[ID]int32
		l       lruList[ID, string]
		hits    uint64
		misses  uint64
		evicted uint64
	}
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
		s.l.init(per)
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
	s.mu.Lock()
	i, ok := s.mu.m[id]
	if !ok {
		s.mu.misses++
		s.mu.Unlock()
		return "", false
	}
	s.mu.hits++
	s.mu.l.touch(i)
	name := s.mu.l.slots[i].val
	s.mu.Unlock()
	return name, true
}

func (c *idCache) put(id ID, name string) {
	s := c.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[id]; ok {
		s.mu.l.slots[i].val = name
		s.mu.l.touch(i)
		return
	}
	i, old, evicted := s.mu.l.add(id, name)
	if evicted {
		delete(s.mu.m, old)
		s.mu.evicted++
	}
	s.mu.m[id] = i
}

func (c *idCache) remove(id ID) {
	s := c.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.mu.m[id]; ok {
		delete(s.mu.m, id)
		s.mu.l.remove(i)
	}
}

func (c *idCache) reset() {
	for i := range c.shards {
		s := &c.shards[i].mu
		s.Lock()
		s.m = make(map[ID]int32)
		s.l.init(s.l.limit)
		s.Unlock()
	}
}

func (c *idCache) stats() (st CacheStats) {
	for i := range c.shards {
		s := &c.shards[i].mu
		s.Lock()
		st.add(CacheStats{Entries: s.l.live, Limit: s.l.limit, Hits: s.hits, Misses: s.misses, Evictions: s.evicted})
		s.Unlock()
	}
	return st
}
