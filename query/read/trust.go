package read

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/tsd-db/tsd/internal/changes"
)

// trustShards and trustPerShard bound the trust index: about 100 bytes
// a row, so at most 16 × 16,384 rows take some 26 MB of its own. The
// entries it points to are the row cache's; one the cache has evicted
// stays reachable until its record goes, so a shard also counts the
// entries it points to (trustShard.used), at most a cache shard's worth,
// and its series records apart (trustShard.sused, the same bound): the
// records point to the very entries the rows do, and counted together
// they would empty the shard twice as often. The index can hold at most
// twice as much again as the cache.
const (
	trustShards   = 16
	trustPerShard = 1 << 14
)

// trustIndex lets a Get be skipped. Every write to the data table marks
// internal/changes with its rows' hours after it lands (the flusher, the
// compactor, deletes, histogram and rollup points, retention), so a row
// read by a Get that began at generation gen still holds the cells read
// while ChangedOrMoved(gen, hour) is false (the flusher's and the
// compactor's marks are moves, which change a row's cells, not its
// points' values); its row cache entry, decoded from
// those cells, answers for the row without reading it again. A Get
// that follows a mark reads the row and records it afresh.
//
// Stored rows read by Get are recorded one by one. A bucket scan of
// Fetch records each hour it read whole (trustedHour): a later Fetch
// then skips the scan of that bucket's hour and takes its rows' entries
// as they are (fetchtrust.go). Both only
// with Options.Changes, which a daemon sets when it alone writes its
// store. An entry the row cache evicts or drops is marked gone and no
// longer found; a full shard is emptied whole (trustPerShard).
type trustIndex struct {
	changes  *changes.Tracker
	seed     maphash.Seed
	maxBytes int64 // per shard: the entries its records point to
	shards   [trustShards]trustShard
}

// trustShard holds the rows Gets read (m), the hours bucket scans read
// whole (hours) and the series walks met whole (series, trustseries.go).
// used counts the rows of the first two, a record of an hour one more
// than its entries, and the entries' sizes; past trustPerShard rows or
// maxBytes, m and hours are emptied. sused counts series the same way,
// and series alone is emptied past the same bounds.
type trustShard struct {
	mu     sync.Mutex
	m      map[uint64]trusted
	hours  map[uint64]*trustedHour
	series map[uint64]*trustedSeries // trustseries.go
	used   shardUse
	sused  shardUse
}

// shardUse is what some of a shard's records hold: rows and the bytes of
// the entries they point to.
type shardUse struct {
	rows  int
	bytes int64
}

// take counts rows more rows and bytes more bytes; false when they do
// not fit beside what is counted, which is then dropped for them alone
// (the caller empties the records counted).
func (u *shardUse) take(rows int, bytes, maxBytes int64) bool {
	fits := u.rows+rows <= trustPerShard && u.bytes+bytes <= maxBytes
	if !fits {
		*u = shardUse{}
	}
	u.rows, u.bytes = u.rows+rows, u.bytes+bytes
	return fits
}

// give uncounts a record replaced.
func (u *shardUse) give(rows int, bytes int64) {
	u.rows, u.bytes = u.rows-rows, u.bytes-bytes
}

// trustedHour is one hour of a metric's rows in one salt bucket, as a
// bucket scan that began at gen met them: every row's cache entry, in
// key order, and none for an hour without rows. It is recorded only when
// the scan selected every row it met there and each had its entry.
type trustedHour struct {
	bucket  int
	metric  string
	base    int64 // s
	gen     uint64
	entries []*cacheEntry
}

// trusted is a row's entry, or the row's key for a row the Get did not
// find, and the generation its Get began at.
type trusted struct {
	e      *cacheEntry
	absent []byte // the key of a row not found; nil with e
	gen    uint64
}

// newTrustIndex returns an index whose shards point to at most maxBytes
// of entries each (a row cache shard's size), nil without a tracker.
func newTrustIndex(c *changes.Tracker, maxBytes int64) *trustIndex {
	if c == nil {
		return nil
	}
	t := &trustIndex{changes: c, seed: maphash.MakeSeed(), maxBytes: maxBytes}
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]trusted)
		t.shards[i].hours = make(map[uint64]*trustedHour)
		t.shards[i].series = make(map[uint64]*trustedSeries)
	}
	return t
}

// gen is the generation a Get takes before it reads.
func (t *trustIndex) gen() uint64 { return t.changes.Gen() }

// find returns the entry of the stored row key at base (ms), or absent
// for a row a Get did not find, when no write may have reached its hour
// since it was read; neither when it must be read.
func (t *trustIndex) find(key []byte, base int64) (e *cacheEntry, absent bool) {
	h := maphash.Bytes(t.seed, key)
	s := &t.shards[h%trustShards]
	s.mu.Lock()
	tr, ok := s.m[h]
	s.mu.Unlock()
	switch {
	case !ok || t.changes.ChangedOrMoved(tr.gen, base, base+hourMs-1):
		return nil, false
	case tr.e == nil:
		return nil, bytes.Equal(tr.absent, key)
	case tr.e.gone.Load() || !bytes.Equal(tr.e.key, key):
		return nil, false
	}
	return tr.e, false
}

// record notes that e holds the cells of the stored row key as a Get
// that began at gen read them, or with e nil that the Get found no row.
func (t *trustIndex) record(key []byte, e *cacheEntry, gen uint64) {
	tr := trusted{e: e, gen: gen}
	if e == nil {
		tr.absent = bytes.Clone(key)
	}
	h := maphash.Bytes(t.seed, key)
	s := &t.shards[h%trustShards]
	s.mu.Lock()
	if old, ok := s.m[h]; ok {
		s.used.give(1, old.e.size())
	}
	s.room(1, tr.e.size(), t.maxBytes)
	s.m[h] = tr
	s.mu.Unlock()
}

// room empties the shard unless rows more rows and bytes more bytes fit,
// and counts them. The caller holds s.mu.
func (s *trustShard) room(rows int, bytes, maxBytes int64) {
	if !s.used.take(rows, bytes, maxBytes) {
		clear(s.m)
		clear(s.hours)
	}
}

// hourKey hashes a bucket's hour (base, s) of metric.
func (t *trustIndex) hourKey(bucket int, metric string, base int64) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	_, _ = h.WriteString(metric)
	var b [12]byte
	binary.LittleEndian.PutUint32(b[:], uint32(bucket))
	binary.LittleEndian.PutUint64(b[4:], uint64(base))
	_, _ = h.Write(b[:])
	return h.Sum64()
}

// findHour returns the rows a bucket scan met in the hour at base (s) of
// metric, when no write may have reached the hour since; nil when the
// hour must be scanned. The caller checks that no entry is gone.
func (t *trustIndex) findHour(bucket int, metric string, base int64) *trustedHour {
	k := t.hourKey(bucket, metric, base)
	s := &t.shards[k%trustShards]
	s.mu.Lock()
	th := s.hours[k]
	s.mu.Unlock()
	if th == nil || th.bucket != bucket || th.base != base || th.metric != metric ||
		t.changes.ChangedOrMoved(th.gen, base*1000, base*1000+hourMs-1) {
		return nil
	}
	return th
}

// recordHour notes that a bucket scan that began at gen met exactly the
// rows of entries (cloned) in the hour at base (s) of metric.
func (t *trustIndex) recordHour(bucket int, metric string, base int64, gen uint64, entries []*cacheEntry) {
	size := entriesSize(entries)
	if len(entries) >= trustPerShard || size > t.maxBytes {
		return
	}
	th := &trustedHour{bucket: bucket, metric: metric, base: base, gen: gen, entries: slices.Clone(entries)}
	k := t.hourKey(bucket, metric, base)
	s := &t.shards[k%trustShards]
	s.mu.Lock()
	if old := s.hours[k]; old != nil {
		s.used.give(1+len(old.entries), entriesSize(old.entries))
	}
	s.room(1+len(entries), size, t.maxBytes)
	s.hours[k] = th
	s.mu.Unlock()
}

// entriesSize is the sum of es' sizes.
func entriesSize(es []*cacheEntry) int64 {
	var n int64
	for _, e := range es {
		n += e.size()
	}
	return n
}

// drop forgets every row and hour (/api/dropcaches).
func (t *trustIndex) drop() {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		clear(s.m)
		clear(s.hours)
		clear(s.series)
		s.used, s.sused = shardUse{}, shardUse{}
		s.mu.Unlock()
	}
}
