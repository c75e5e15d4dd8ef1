package pebble

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tsd-db/tsd/storage"
)

// table implements storage.Table for one table of a DB.
type table struct {
	db      *DB
	id      uint32
	name    string
	state   atomic.Pointer[tableState]
	dropped atomic.Bool
}

var _ storage.Table = (*table)(nil)

// famInfo is a family's spec in the form reads need.
type famInfo struct {
	name        string
	maxVersions int
	ttlMicros   int64
}

// tableState is an immutable snapshot of a table's spec; EnsureTable swaps
// in a new one.
type tableState struct {
	spec storage.TableSpec
	fams []famInfo // sorted by name, so by key order
}

func newTable(d *DB, id uint32, spec storage.TableSpec) *table {
	t := &table{db: d, id: id, name: spec.Name}
	t.state.Store(newTableState(spec))
	return t
}

func newTableState(spec storage.TableSpec) *tableState {
	s := &tableState{spec: spec, fams: make([]famInfo, len(spec.Families))}
	for i, f := range spec.Families {
		s.fams[i] = famInfo{name: f.Name, maxVersions: f.MaxVersions, ttlMicros: f.TTL.Microseconds()}
	}
	slices.SortFunc(s.fams, func(a, b famInfo) int { return strings.Compare(a.name, b.name) })
	return s
}

// family returns the index in fams of the family named by b, or -1.
func (s *tableState) family(b []byte) int {
	for i := range s.fams {
		if s.fams[i].name == string(b) {
			return i
		}
	}
	return -1
}

// familyIndex is family for a string name.
func (s *tableState) familyIndex(name string) int {
	for i := range s.fams {
		if s.fams[i].name == name {
			return i
		}
	}
	return -1
}

// hasVersionLimit reports whether any family keeps a limited number of
// versions.
func (s *tableState) hasVersionLimit() bool {
	for i := range s.fams {
		if s.fams[i].maxVersions > 0 {
			return true
		}
	}
	return false
}

// hasTTL reports whether any family expires its cells.
func (s *tableState) hasTTL() bool {
	for i := range s.fams {
		if s.fams[i].ttlMicros > 0 {
			return true
		}
	}
	return false
}

// Spec returns the table's name and families.
func (t *table) Spec() storage.TableSpec {
	return cloneSpec(t.state.Load().spec)
}

// begin marks a call in flight and returns the current spec; it fails after
// Close or DropTable. A successful begin must be paired with t.db.leave().
func (t *table) begin() (*tableState, error) {
	if err := t.db.enter(); err != nil {
		return nil, err
	}
	if t.dropped.Load() {
		t.db.leave()
		return nil, fmt.Errorf("table %q: dropped: %w", t.name, storage.ErrNotFound)
	}
	return t.state.Load(), nil
}

// beginWrite is begin for a write: while the store refuses writes (a full
// or low disk) it refuses at once with that reason, even while pebble is
// being reopened read-only, when begin alone would only say "reopening".
func (t *table) beginWrite() (*tableState, error) {
	if err := t.db.admit(false); err != nil {
		return nil, err
	}
	return t.begin()
}

// numRowLocks is the number of row lock stripes.
const numRowLocks = 1024

// rowLock is one padded stripe. Writes hold it shared, so they never wait for
// each other and pebble groups their syncs; read-modify-write operations hold
// it exclusively, so no write to the row lands between their read and their
// commit.
type rowLock struct {
	sync.RWMutex
	_ [64 - unsafe.Sizeof(sync.RWMutex{})]byte
}

// rowLocks stripes row locks by hash of table id and row.
type rowLocks struct {
	seed    maphash.Seed
	stripes [numRowLocks]rowLock
}

func (r *rowLocks) index(id uint32, row []byte) int {
	h := maphash.Bytes(r.seed, row) ^ (uint64(id) * 0x9E3779B97F4A7C15)
	h ^= h >> 29
	return int(h % numRowLocks)
}

// lock returns the stripe of a row.
func (r *rowLocks) lock(id uint32, row []byte) *rowLock {
	return &r.stripes[r.index(id, row)]
}

// rowSet is a set of stripes, locked and unlocked in ascending order so
// multi-row writers cannot deadlock.
type rowSet [numRowLocks / 64]uint64

func (s *rowSet) add(i int) { s[i/64] |= 1 << (i % 64) }

func (r *rowLocks) rlockSet(s *rowSet) {
	r.forEach(s, func(l *rowLock) { l.RLock() })
}

func (r *rowLocks) runlockSet(s *rowSet) {
	r.forEach(s, func(l *rowLock) { l.RUnlock() })
}

func (r *rowLocks) forEach(s *rowSet, fn func(*rowLock)) {
	for w, word := range s {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			fn(&r.stripes[w*64+b])
			word &= word - 1
		}
	}
}
