package head

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"
)

// seriesShard maps series keys to series for one slice of the hash space.
// Shards are padded to a cache line so that two shards' locks never share
// one.
type seriesShard struct {
	mu sync.RWMutex
	m  map[string]*memSeries // guarded by mu
	_  [64 - unsafe.Sizeof(sync.RWMutex{}) - 8]byte
}

// seriesShards finds series by key without a global lock.
type seriesShards struct {
	seed   maphash.Seed
	shards []seriesShard
}

func newSeriesShards(n int) *seriesShards {
	s := &seriesShards{seed: maphash.MakeSeed(), shards: make([]seriesShard, n)}
	for i := range s.shards {
		s.shards[i].m = make(map[string]*memSeries)
	}
	return s
}

// shard returns the shard of key. len(shards) is a power of two.
func (s *seriesShards) shard(key []byte) *seriesShard {
	return &s.shards[maphash.Bytes(s.seed, key)&uint64(len(s.shards)-1)]
}

// get returns the series of key, or nil.
func (s *seriesShards) get(key []byte) *memSeries {
	sh := s.shard(key)
	sh.mu.RLock()
	ms := sh.m[string(key)]
	sh.mu.RUnlock()
	return ms
}

// getOrAdd returns the series of key, adding the one newSeries returns if
// there is none yet. created reports whether newSeries' series was added.
func (s *seriesShards) getOrAdd(key []byte, newSeries func() *memSeries) (ms *memSeries, created bool) {
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ms = sh.m[string(key)]; ms != nil {
		return ms, false
	}
	ms = newSeries()
	sh.m[ms.key] = ms
	return ms, true
}

// forEach calls fn for every series, one shard locked at a time.
func (s *seriesShards) forEach(fn func(*memSeries)) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for _, ms := range sh.m {
			fn(ms)
		}
		sh.mu.RUnlock()
	}
}

const refPageBits = 12

// refPage holds the series of 4096 consecutive refs.
type refPage [1 << refPageBits]atomic.Pointer[memSeries]

// refTable maps SeriesRef to series with two loads and no lock: refs are
// dense, so it is an array of pages that only grows.
type refTable struct {
	pages atomic.Pointer[[]*refPage]
	mu    struct {
		sync.Mutex
		next SeriesRef
	}
}

// get returns the series of ref, or nil.
func (t *refTable) get(ref SeriesRef) *memSeries {
	pages := t.pages.Load()
	i := uint64(ref) >> refPageBits
	if pages == nil || i >= uint64(len(*pages)) {
		return nil
	}
	return (*pages)[i][ref&(1<<refPageBits-1)].Load()
}

// add gives ms the next ref and publishes it.
func (t *refTable) add(ms *memSeries) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.next++
	ref := t.mu.next
	var pages []*refPage
	if p := t.pages.Load(); p != nil {
		pages = *p
	}
	if i := int(uint64(ref) >> refPageBits); i >= len(pages) {
		grown := append(pages[:len(pages):len(pages)], new(refPage))
		t.pages.Store(&grown)
		pages = grown
	}
	ms.ref = ref
	pages[uint64(ref)>>refPageBits][ref&(1<<refPageBits-1)].Store(ms)
}
