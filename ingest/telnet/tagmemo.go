package telnet

import (
	"bytes"
	"hash/maphash"

	"github.com/tsd-db/tsd/ingest/parse"
)

// The memo's shape: memoSets sets of memoWays entries, each a tag section
// of at most maxMemoBytes. 64 sections cover the hosts a collector or a
// load generator interleaves on one connection, for a few KiB to at most
// ~100 KiB per connection.
const (
	memoSets     = 32
	memoWays     = 2
	maxMemoBytes = 1 << 10
)

// tagMemo remembers recent tag sections parsed without error and their
// result. A collector sends a host's metrics one after another with the
// same tags, and the same hosts' tags again every interval, so most lines'
// tags are byte for byte a recent line's: comparing them and copying the
// remembered tags is far cheaper than scanning their bytes' classes again.
// The result of tags is a function of its input bytes alone, so reusing it
// changes nothing but what the tags alias.
type tagMemo struct {
	seed  maphash.Seed
	last  *tagEntry // the entry of the previous good line, checked first
	sets  [memoSets][memoWays]tagEntry
	mru   [memoSets]uint8 // per set, the way hit or filled last
	spans []tagSpan       // scratch: the kept tags' places in a section
}

// tagEntry is one remembered tag section.
type tagEntry struct {
	ok    bool
	rest  []byte      // a copy of the section
	tags  []parse.Tag // the tags kept, aliasing rest
	extra int
	check bool
}

// tagSpan is one kept tag of a section: key rest[start:eq], value
// rest[eq+1:end].
type tagSpan struct{ start, eq, end int }

func (m *tagMemo) init() { m.seed = maphash.MakeSeed() }

// lookup returns the entry remembering rest, or nil and rest's hash for
// remember (0 when rest is too long to remember).
func (m *tagMemo) lookup(rest []byte) (*tagEntry, uint64) {
	if e := m.last; e != nil && bytes.Equal(rest, e.rest) {
		return e, 0
	}
	if len(rest) > maxMemoBytes {
		return nil, 0
	}
	h := maphash.Bytes(m.seed, rest)
	s := h % memoSets
	for w := range m.sets[s] {
		if e := &m.sets[s][w]; e.ok && bytes.Equal(rest, e.rest) {
			m.mru[s], m.last = uint8(w), e
			return e, h
		}
	}
	return nil, h
}

// remember stores rest (hash h), whose kept tags' spans are in m.spans, in
// the way of its set not used last.
func (m *tagMemo) remember(rest []byte, h uint64, extra int, check bool) {
	s := h % memoSets
	w := (m.mru[s] + 1) % memoWays
	e := &m.sets[s][w]
	e.rest = append(e.rest[:0], rest...)
	e.tags = e.tags[:0]
	for _, sp := range m.spans {
		e.tags = append(e.tags, parse.Tag{Key: e.rest[sp.start:sp.eq], Value: e.rest[sp.eq+1 : sp.end]})
	}
	e.ok, e.extra, e.check = true, extra, check
	m.mru[s], m.last = w, e
}
