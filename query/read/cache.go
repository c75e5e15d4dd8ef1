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
	blk        []int64 // rowSummaries: each block's min, max and sum
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

// rowSummaries computes pts' intSum and block summaries in one pass over
// the points: the sum when every point is an Int and n × the largest
// magnitude is at most 2^53; the smallest value, the largest and the
// (wrapping) sum of each blockPoints points, three int64s a block, when
// every point is an Int and there are at least two blocks (nil
// otherwise). An Int is never NaN nor a staleness marker, so
// max_over_time and min_over_time over a run of whole blocks need only
// the extremes, and a sum or an average only the sums (extremes, spanSum).
// Every row the cache adopts goes through here: on a cold read, every
// row it decodes.
func rowSummaries(pts []series.Point) (intSum, []int64) {
	var blk []int64
	if len(pts) >= 2*blockPoints {
		blk = make([]int64, 3*((len(pts)+blockPoints-1)/blockPoints))
	}
	var (
		s      int64
		maxAbs uint64
	)
	for b, i := 0, 0; i < len(pts); b, i = b+1, i+blockPoints {
		bs, ok := blockSummary(pts[i:min(i+blockPoints, len(pts))])
		if !ok {
			return intSum{}, nil
		}
		s += bs.sum // wraps only when the sum is refused below
		maxAbs = max(maxAbs, bs.maxAbs)
		if blk != nil {
			blk[3*b], blk[3*b+1], blk[3*b+2] = bs.lo, bs.hi, bs.sum
		}
	}
	if maxAbs > exactInt || (maxAbs != 0 && uint64(len(pts)) > exactInt/maxAbs) {
		return intSum{}, blk
	}
	return intSum{sum: s, maxAbs: maxAbs, ok: true}, blk
}

// blockStats are one block's summaries.
type blockStats struct {
	lo, hi, sum int64
	maxAbs      uint64
}

// blockSummary summarises a block of at most blockPoints points, false when
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
	e.sum, e.blk = rowSummaries(pts)
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
	e.sum, e.blk = rowSummaries(pts)
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
// charged: its block summaries (24 bytes a block, when it has them) as
// three quarters of a byte a point.
func entrySize(n, k int) int64 { return int64(n*pointBytes + 3*n/4 + k + entryOverhead) }

// size is what the cache charges for e; nothing for nil (the trust
// index's record of a row a Get did not find).
func (e *cacheEntry) size() int64 {
	if e == nil {
		return 0
	}
	return entrySize(len(e.pts), len(e.key))
}

// blockPoints is how many points one block of a row's summaries covers.
const blockPoints = 32

// extremes returns the smallest and largest value of the first k points
// of pts, which must end where e's points end; ok is false when e has no
// block summaries or pts is not such a suffix.
func (e *cacheEntry) extremes(pts []series.Point, k int) (lo, hi int64, ok bool) {
	i, end, ok := e.locate(pts, k)
	if !ok || e.blk == nil {
		return 0, 0, false
	}
	lo, hi = math.MaxInt64, math.MinInt64
	first, last := (i+blockPoints-1)/blockPoints, end/blockPoints // whole blocks [first, last)
	if first < last {
		lo, hi = pointExtremes(e.pts[i:first*blockPoints], lo, hi)
		blk := e.blk[3*first : 3*last]
		for j := 0; j+1 < len(blk); j += 3 {
			lo, hi = min(lo, blk[j]), max(hi, blk[j+1])
		}
		i = last * blockPoints
	}
	lo, hi = pointExtremes(e.pts[i:end], lo, hi)
	return lo, hi, true
}

// spanSum returns the exact sum of the first k points of pts, which must
// end where e's points end, and a bound on their magnitudes; ok is false
// when the row has no intSum or pts is not such a suffix. Any run of the
// row's points sums exactly (intSum), so this is the sum adding them one
// by one gives. A block the span cuts is read from its shorter side: the
// points the span takes, or the block's sum less the points it leaves:
// the points a window reads are mostly cache misses, so reading at most
// half a block at each cut saves more than the block-by-block loop costs.
func (e *cacheEntry) spanSum(pts []series.Point, k int) (sum int64, maxAbs uint64, ok bool) {
	i, end, ok := e.locate(pts, k)
	if !ok || !e.sum.ok {
		return 0, 0, false
	}
	if e.blk == nil {
		return pointSum(e.pts[i:end]), e.sum.maxAbs, true
	}
	for i < end {
		b := i / blockPoints
		lo, hi := b*blockPoints, min((b+1)*blockPoints, len(e.pts))
		stop := min(end, hi)
		if 2*(stop-i) <= hi-lo {
			sum += pointSum(e.pts[i:stop])
		} else {
			sum += e.blk[3*b+2] - pointSum(e.pts[lo:i]) - pointSum(e.pts[stop:hi])
		}
		i = stop
	}
	return sum, e.sum.maxAbs, true
}

// locate returns where the first k points of pts lie in e's points:
// pts must be a suffix of them, the very slice; ok is false otherwise or
// when k is not in [1, len(pts)].
func (e *cacheEntry) locate(pts []series.Point, k int) (i, end int, ok bool) {
	all := e.pts
	n, m := len(pts), len(all)
	if n == 0 || n > m || k <= 0 || k > n || &pts[n-1] != &all[m-1] {
		return 0, 0, false
	}
	return m - n, m - n + k, true
}

// pointExtremes folds pts, all Ints, into a smallest and a largest value.
func pointExtremes(pts []series.Point, lo, hi int64) (int64, int64) {
	for j := range pts {
		x := int64(pts[j].Bits)
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// pointSum adds pts, all Ints.
func pointSum(pts []series.Point) int64 {
	var s int64
	for j := range pts {
		s += int64(pts[j].Bits)
	}
	return s
}

// take removes the row's entry under fp and returns it, nil when fp
// holds no entry of the row (key, ncells).
func (c *rowCache) take(fp uint64, key []byte, ncells int) *cacheEntry {
	s := c.shard(fp)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[fp]
	if e == nil || e.cells != ncells || !bytes.Equal(e.key, key) {
		return nil
	}
	s.unlink(e)
	delete(s.m, fp)
	s.bytes -= e.size()
	e.gone.Store(true)
	return e
}

// rekey keeps the points of old, an entry taken out (take), as the entry
// of the row (key, ncells) under fp, and reports whether it did: not when
// fp holds an entry already or the row does not fit a shard. The new
// entry shares old's points and summaries, which no entry writes.
func (c *rowCache) rekey(old *cacheEntry, fp uint64, key []byte, ncells int) bool {
	size := entrySize(len(old.pts), len(key))
	if size > c.maxShard {
		return false
	}
	s := c.shard(fp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[fp]; ok {
		return false
	}
	s.insert(&cacheEntry{fp: fp, key: bytes.Clone(key), cells: ncells, pts: old.pts, sum: old.sum, blk: old.blk}, size, c.maxShard)
	return true
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
