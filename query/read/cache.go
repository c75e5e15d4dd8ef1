package read

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// Row cache sizing. An entry costs its points (24 bytes each) plus its
// key and entryOverhead for the struct, the map slot and the list links.
const (
	cacheShards   = 16
	pointBytes    = 24
	entryOverhead = 128
	// ghostsPerShard bounds the doorkeeper: fingerprints seen once.
	ghostsPerShard = 1 << 14
)

// rowCache keeps decoded rows, so a row read again (a dashboard's refresh,
// the same window for another panel) costs a hash and a copy instead of a
// decode, which is most of a query's CPU. It is keyed by a fingerprint of
// the row key and every cell the store returned (qualifier, value and cell
// timestamp): a row whose cells change gets a new fingerprint, so an entry
// can never be stale; the old one ages out. Once the cache is full, a row
// is admitted on its second sighting, so a one-off export does not flush
// what dashboards reuse (add).
type rowCache struct {
	seed     maphash.Seed
	maxShard int64    // bytes per shard
	res      *reserve // nil: entries come from the heap
	shards   [cacheShards]cacheShard
	hits     atomic.Int64
	misses   atomic.Int64
	// trust finds a stored row's entry by its key alone, for a reader
	// that knows from internal/changes that the row's hour was not
	// written since (trust.go); nil without Options.Changes.
	trust *trustIndex
}

type cacheShard struct {
	mu     sync.Mutex
	m      map[uint64]*cacheEntry
	ghosts map[uint64]struct{}
	head   cacheEntry // sentinel of the LRU ring: head.next is the newest
	bytes  int64
}

type cacheEntry struct {
	fp         uint64
	key        []byte
	cells      int
	pts        []series.Point // never written once cached
	sum        intSum
	ext        []int64 // rowSummaries: each extBlock points' min and max
	prev, next *cacheEntry
	gone       atomic.Bool // evicted or dropped: trust no longer finds it
	// ref is set by touch: eviction then moves the entry to the front
	// once instead of evicting it (a second chance, as CLOCK gives), so
	// the trust index's hits take no lock.
	ref atomic.Bool
}

// intSum is a cached row's exact integer sum, for range functions that
// would add the row's points one by one: set (ok) only when every point
// is an Int and n × the largest magnitude is at most 2^53, so every
// partial sum of any run of them is exact in an int64 and in a float64.
type intSum struct {
	sum    int64
	maxAbs uint64
	ok     bool
}

// exactInt bounds the integers a float64 holds exactly.
const exactInt = 1 << 53

// rowSummaries computes pts' intSum and block extremes in one pass over
// the points: the sum when every point is an Int and n × the largest
// magnitude is at most 2^53; the smallest and largest value of each
// extBlock points, in pairs, when every point is an Int and there are at
// least two blocks (nil otherwise). An Int is never NaN nor a staleness
// marker, so max_over_time and min_over_time over a run of whole blocks
// need only the extremes (cacheEntry.extremes). Every row the cache
// adopts goes through here: on a cold read, every row it decodes.
func rowSummaries(pts []series.Point) (intSum, []int64) {
	var ext []int64
	if len(pts) >= 2*extBlock {
		ext = make([]int64, 2*((len(pts)+extBlock-1)/extBlock))
	}
	var (
		s      int64
		maxAbs uint64
	)
	for b, i := 0, 0; i < len(pts); b, i = b+1, i+extBlock {
		bs, ok := blockSummary(pts[i:min(i+extBlock, len(pts))])
		if !ok {
			return intSum{}, nil
		}
		s += bs.sum // wraps only when the sum is refused below
		maxAbs = max(maxAbs, bs.maxAbs)
		if ext != nil {
			ext[2*b], ext[2*b+1] = bs.lo, bs.hi
		}
	}
	if maxAbs > exactInt || (maxAbs != 0 && uint64(len(pts)) > exactInt/maxAbs) {
		return intSum{}, ext
	}
	return intSum{sum: s, maxAbs: maxAbs, ok: true}, ext
}

// blockStats are one block's summaries.
type blockStats struct {
	lo, hi, sum int64
	maxAbs      uint64
}

// blockSummary summarises a block of at most extBlock points, false when
// one is not an Int. It is a function of its own so that its running
// values stay in registers: inside rowSummaries' loop, beside the
// extremes' slice, the compiler kept them on the stack, and the pass took
// about 1.6 times as long (BenchmarkRowSummaries).
func blockSummary(blk []series.Point) (blockStats, bool) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var (
		s      int64
		maxAbs uint64
		other  series.Kind // any bit set: a point that is not an Int
	)
	for j := range blk {
		p := &blk[j]
		other |= p.Kind ^ series.Int
		x := int64(p.Bits)
		lo, hi = min(lo, x), max(hi, x)
		s += x
		m := x >> 63
		maxAbs = max(maxAbs, uint64((x^m)-m))
	}
	return blockStats{lo: lo, hi: hi, sum: s, maxAbs: maxAbs}, other == 0
}

// newRowCache returns a cache of at most maxBytes whose new entries come
// from a reserve of reserveBytes (-1: from the heap), or nil when
// maxBytes is not positive.
func newRowCache(maxBytes, reserveBytes int64) *rowCache {
	if maxBytes <= 0 {
		return nil
	}
	c := &rowCache{seed: maphash.MakeSeed(), maxShard: max(maxBytes/cacheShards, 1), res: newReserve(min(reserveBytes, maxBytes))}
	for i := range c.shards {
		s := &c.shards[i]
		s.m = make(map[uint64]*cacheEntry)
		s.ghosts = make(map[uint64]struct{})
		s.head.prev, s.head.next = &s.head, &s.head
	}
	return c
}

// fingerprint hashes the row key and its cells. scratch is a reused buffer
// for the fixed-width fields; it is returned grown.
func (c *rowCache) fingerprint(scratch, key []byte, cells []rowkey.Cell) (uint64, []byte) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	_, _ = h.Write(key)
	for i := range cells {
		cl := &cells[i]
		scratch = binary.LittleEndian.AppendUint64(scratch[:0], uint64(cl.Timestamp))
		scratch = binary.LittleEndian.AppendUint32(scratch, uint32(len(cl.Qualifier)))
		scratch = binary.LittleEndian.AppendUint32(scratch, uint32(len(cl.Value)))
		_, _ = h.Write(scratch)
		_, _ = h.Write(cl.Qualifier)
		_, _ = h.Write(cl.Value)
	}
	return h.Sum64(), scratch
}

// lookup fingerprints a stored row and returns its entry, nil if it is
// not cached; scratch is returned grown.
func (c *rowCache) lookup(scratch, key []byte, cells []rowkey.Cell) (uint64, *cacheEntry, []byte) {
	fp, scratch := c.fingerprint(scratch, key, cells)
	return fp, c.entry(fp, key, len(cells)), scratch
}

func (c *rowCache) shard(fp uint64) *cacheShard { return &c.shards[fp%cacheShards] }

// entry returns the row's entry, nil if it is not cached.
func (c *rowCache) entry(fp uint64, key []byte, ncells int) *cacheEntry {
	s := c.shard(fp)
	s.mu.Lock()
	e := s.m[fp]
	if e == nil || e.cells != ncells || !bytes.Equal(e.key, key) {
		s.mu.Unlock()
		c.misses.Add(1)
		return nil
	}
	s.unlink(e)
	s.pushFront(e)
	s.mu.Unlock()
	c.hits.Add(1)
	return e
}

// touch marks e used: a row the trust index answers (trust.go) is as hot
// as one found by fingerprint, which entry moves to the front of its
// shard's LRU list. Eviction gives a marked entry a second chance at the
// front instead (insert), so touch takes no lock: the trust index answers
// a scan's hour with one touch a row. An entry evicted or dropped
// meanwhile stays out.
func (c *rowCache) touch(e *cacheEntry) {
	if !e.ref.Load() {
		e.ref.Store(true)
	}
}

// adopt keeps pts (which the cache then owns: the caller must not write
// them) as the row's entry on its first offer and returns the entry; nil
// when it does not fit a shard. A row already cached under fp returns its
// entry.
func (c *rowCache) adopt(fp uint64, key []byte, ncells int, pts []series.Point) *cacheEntry {
	size := entrySize(len(pts), len(key))
	if size > c.maxShard {
		return nil
	}
	s := c.shard(fp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[fp]; ok && e.cells == ncells && bytes.Equal(e.key, key) {
		return e
	} else if ok {
		return nil // another row under the same fingerprint: keep it
	}
	e := &cacheEntry{fp: fp, key: bytes.Clone(key), cells: ncells, pts: pts}
	e.sum, e.ext = rowSummaries(pts)
	s.insert(e, size, c.maxShard)
	return e
}

// insert links a new entry and evicts the oldest past max bytes, but for
// entries touched since they last reached the front, which go back to the
// front unmarked (at most one pass over the shard, should touches race
// with it). The caller holds s.mu.
func (s *cacheShard) insert(e *cacheEntry, size, max int64) {
	s.m[e.fp] = e
	s.pushFront(e)
	s.bytes += size
	chances := len(s.m)
	for s.bytes > max {
		old := s.head.prev
		if chances > 0 && old != e && old.ref.Load() {
			chances--
			old.ref.Store(false)
			s.unlink(old)
			s.pushFront(old)
			continue
		}
		s.unlink(old)
		old.gone.Store(true)
		delete(s.m, old.fp)
		s.bytes -= old.size()
	}
}

// add offers a decoded row and returns the entry it made, nil when it
// kept none. A stored row (eager) is kept on its first offer while its
// shard has room for it without evicting, as a cache still filling up
// loses nothing by it; past that, and for a head row still filling,
// the first offer only records the fingerprint and the second keeps the
// row, so a one-off read does not evict what dashboards reuse. Either
// way the row must fit a shard and the reserve must have room for it.
func (c *rowCache) add(fp uint64, key []byte, ncells int, pts []series.Point, eager bool) *cacheEntry {
	size := entrySize(len(pts), len(key))
	if size > c.maxShard {
		return nil
	}
	s := c.shard(fp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[fp]; ok {
		return nil
	}
	_, seen := s.ghosts[fp]
	var kept []series.Point
	if seen || eager && s.bytes+size <= c.maxShard {
		kept = c.res.alloc(len(pts))
	}
	if kept == nil {
		if !seen {
			s.remember(fp)
		}
		return nil // kept on a later offer
	}
	delete(s.ghosts, fp)
	e := &cacheEntry{fp: fp, key: bytes.Clone(key), cells: ncells, pts: append(kept, pts...)}
	e.sum, e.ext = rowSummaries(pts)
	s.insert(e, size, c.maxShard)
	return e
}

// remember records a fingerprint offered once, forgetting every other
// when the doorkeeper is full. The caller holds s.mu.
func (s *cacheShard) remember(fp uint64) {
	if len(s.ghosts) >= ghostsPerShard {
		clear(s.ghosts)
	}
	s.ghosts[fp] = struct{}{}
}

// entrySize is what an entry of n points and a key of k bytes is
// charged: its extremes (16 bytes a block, when it has them) as half a
// byte a point.
func entrySize(n, k int) int64 { return int64(n*pointBytes + n/2 + k + entryOverhead) }

// size is what the cache charges for e; nothing for nil (the trust
// index's record of a row a Get did not find).
func (e *cacheEntry) size() int64 {
	if e == nil {
		return 0
	}
	return entrySize(len(e.pts), len(e.key))
}

// extBlock is how many points one pair of a row's extremes covers.
const extBlock = 32

// extremes returns the smallest and largest value of the first k points
// of pts, which must end where e's points end, from e's block extremes
// and the points of the blocks the span cuts; ok is false when e has no
// extremes or pts is not such a suffix.
func (e *cacheEntry) extremes(pts []series.Point, k int) (lo, hi int64, ok bool) {
	all := e.pts
	n, m := len(pts), len(all)
	if e.ext == nil || n == 0 || n > m || k <= 0 || k > n || &pts[n-1] != &all[m-1] {
		return 0, 0, false
	}
	lo, hi = math.MaxInt64, math.MinInt64
	for i, end := m-n, m-n+k; i < end; {
		if i%extBlock == 0 && i+extBlock <= end {
			b := 2 * (i / extBlock)
			lo, hi = min(lo, e.ext[b]), max(hi, e.ext[b+1])
			i += extBlock
			continue
		}
		x := int64(all[i].Bits)
		lo, hi = min(lo, x), max(hi, x)
		i++
	}
	return lo, hi, true
}

// drop empties the cache (/api/dropcaches).
func (c *rowCache) drop() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for _, e := range s.m {
			e.gone.Store(true)
		}
		clear(s.m)
		clear(s.ghosts)
		s.head.prev, s.head.next = &s.head, &s.head
		s.bytes = 0
		s.mu.Unlock()
	}
}

// size returns the bytes held and the entries.
func (c *rowCache) size() (bytes int64, entries int) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		bytes += s.bytes
		entries += len(s.m)
		s.mu.Unlock()
	}
	return bytes, entries
}

func (s *cacheShard) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (s *cacheShard) pushFront(e *cacheEntry) {
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
}

// suffixSum returns the exact sum of pts, which must end where e's points
// end, from e's row sum less the points before pts; ok is false when the
// row has no intSum, pts is not such a suffix, or it is the shorter half.
func (e *cacheEntry) suffixSum(pts []series.Point) (sum int64, maxAbs uint64, ok bool) {
	all := e.pts
	n, m := len(pts), len(all)
	if !e.sum.ok || n == 0 || n > m || &pts[n-1] != &all[m-1] || 2*n < m {
		return 0, 0, false
	}
	sum = e.sum.sum
	for i := range all[:m-n] {
		sum -= int64(all[i].Bits)
	}
	return sum, e.sum.maxAbs, true
}
