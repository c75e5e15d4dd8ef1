package index

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

const (
	numShards = 64
	pageBits  = 12
	pageSize  = 1 << pageBits
)

// seriesEntry is one series in memory. id and tsuid never change; the span
// only widens, through atomics, so the write path extends it without a lock.
type seriesEntry struct {
	id    uint32
	tsuid string
	first atomic.Uint32
	last  atomic.Uint32
	// dirty says the entry is on Index.dirty's list: its span changed
	// since it was last persisted.
	dirty atomic.Bool
}

func newEntry(id uint32, tsuid []byte, sp span) *seriesEntry {
	e := &seriesEntry{id: id, tsuid: string(tsuid)}
	e.first.Store(sp.first)
	e.last.Store(sp.last)
	return e
}

// span returns the entry's hours. The two fields are read apart, but each
// only moves outward, so a torn read is at worst empty (never skipped).
func (e *seriesEntry) span() span { return span{e.first.Load(), e.last.Load()} }

// widen merges sp into the entry's span and reports whether it grew.
func (e *seriesEntry) widen(sp span) bool {
	if sp.empty() {
		return false
	}
	grew := false
	for old := e.first.Load(); sp.first < old; old = e.first.Load() {
		if e.first.CompareAndSwap(old, sp.first) {
			grew = true
			break
		}
	}
	for old := e.last.Load(); sp.last > old; old = e.last.Load() {
		if e.last.CompareAndSwap(old, sp.last) {
			grew = true
			break
		}
	}
	return grew
}

// shard is one stripe of the TSUID map, padded to its own cache lines so
// that write-path lookups on different cores do not share a line.
type shard struct {
	mu sync.RWMutex
	m  map[string]*seriesEntry // guarded by mu
	_  [128 - 32]byte
}

// keyPostings are the postings of one tag key (or, under NameKey, of the
// metrics).
type keyPostings struct {
	all    *roaring.Bitmap            // series having the key
	values map[uid.ID]*roaring.Bitmap // value UID → series
	// list holds the value UIDs in arrival order. It is append-only, so a
	// reader may keep a prefix after releasing the lock.
	list []uid.ID

	// names caches the names of a prefix of list, in the same order
	// (noName for a UID without one), so that matching names does not go
	// through the UID cache per value. Readers extend it; DropCaches
	// empties it.
	nameMu sync.Mutex
	names  []string // guarded by nameMu
}

// noName stands for a value UID without a name (names are printable).
const noName = "\x00"

// cachedNames returns the cached names; the slice is read-only.
func (kp *keyPostings) cachedNames() []string {
	kp.nameMu.Lock()
	defer kp.nameMu.Unlock()
	return kp.names[:len(kp.names):len(kp.names)]
}

// extendNames appends the names of list[from:from+len(fresh)], unless
// another reader extended the cache first.
func (kp *keyPostings) extendNames(from int, fresh []string) {
	kp.nameMu.Lock()
	defer kp.nameMu.Unlock()
	if len(kp.names) == from {
		kp.names = append(kp.names, fresh...)
	}
}

// memIndex is the in-memory index. Lock order: mu, then a shard's mu.
type memIndex struct {
	w      series.Widths
	seed   maphash.Seed
	shards [numShards]shard

	mu struct {
		sync.RWMutex
		keys   map[uid.ID]*keyPostings // NameKey holds the metrics
		byTags []*roaring.Bitmap       // series by number of tags
		pages  [][]*seriesEntry        // series by id, pageSize per page
		n      int
	}
	// gen moves with every change to what Postings may answer: a series
	// added, names dropped (selcache.go).
	gen atomic.Uint64
}

func (m *memIndex) init(w series.Widths) {
	m.w = w
	m.seed = maphash.MakeSeed()
	for i := range m.shards {
		m.shards[i].m = make(map[string]*seriesEntry)
	}
	m.mu.keys = make(map[uid.ID]*keyPostings)
}

func (m *memIndex) shardOf(tsuid []byte) *shard {
	return &m.shards[maphash.Bytes(m.seed, tsuid)%numShards]
}

// get returns the entry of tsuid or nil. It does not allocate.
func (m *memIndex) get(tsuid []byte) *seriesEntry {
	sh := m.shardOf(tsuid)
	sh.mu.RLock()
	e := sh.m[string(tsuid)]
	sh.mu.RUnlock()
	return e
}

// add inserts a series, or returns the entry already holding tsuid. It
// reports a conflict (another TSUID under id) as a nil entry.
func (m *memIndex) add(id uint32, tsuid []byte, sp span) (e *seriesEntry, fresh bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.get(tsuid); e != nil {
		return e, false
	}
	if m.byIDLocked(id) != nil {
		return nil, false
	}
	e = newEntry(id, tsuid, sp)
	m.setIDLocked(e)
	m.postLocked(e, tsuid)
	m.gen.Add(1)
	sh := m.shardOf(tsuid)
	sh.mu.Lock()
	sh.m[e.tsuid] = e
	sh.mu.Unlock()
	m.mu.n++
	return e, true
}

// byID returns the series with id, or nil.
func (m *memIndex) byID(id uint32) *seriesEntry {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byIDLocked(id)
}

// byIDLocked returns the series with id; the caller holds mu (either way).
func (m *memIndex) byIDLocked(id uint32) *seriesEntry {
	p := int(id >> pageBits)
	if p >= len(m.mu.pages) || m.mu.pages[p] == nil {
		return nil
	}
	return m.mu.pages[p][id&(pageSize-1)]
}

func (m *memIndex) setIDLocked(e *seriesEntry) {
	p := int(e.id >> pageBits)
	for len(m.mu.pages) <= p {
		m.mu.pages = append(m.mu.pages, nil)
	}
	if m.mu.pages[p] == nil {
		m.mu.pages[p] = make([]*seriesEntry, pageSize)
	}
	m.mu.pages[p][e.id&(pageSize-1)] = e
}

// postLocked adds e to the postings of its metric, tags and tag count.
// tsuid was checked by checkTSUID.
func (m *memIndex) postLocked(e *seriesEntry, tsuid []byte) {
	w := m.w
	m.postValue(NameKey, readUID(tsuid[:w.Metric]), e.id)
	ntags := 0
	for p := tsuid[w.Metric:]; len(p) > 0; p = p[w.TagK+w.TagV:] {
		m.postValue(readUID(p[:w.TagK]), readUID(p[w.TagK:w.TagK+w.TagV]), e.id)
		ntags++
	}
	for len(m.mu.byTags) <= ntags {
		m.mu.byTags = append(m.mu.byTags, roaring.New())
	}
	m.mu.byTags[ntags].Add(e.id)
}

func (m *memIndex) postValue(k, v uid.ID, id uint32) {
	kp := m.mu.keys[k]
	if kp == nil {
		kp = &keyPostings{all: roaring.New(), values: make(map[uid.ID]*roaring.Bitmap)}
		m.mu.keys[k] = kp
	}
	kp.all.Add(id)
	b := kp.values[v]
	if b == nil {
		b = roaring.New()
		kp.values[v] = b
		kp.list = append(kp.list, v)
	}
	b.Add(id)
}

// readUID reads a big-endian UID of len(b) bytes.
func readUID(b []byte) uid.ID {
	var v uid.ID
	for _, c := range b {
		v = v<<8 | uid.ID(c)
	}
	return v
}
