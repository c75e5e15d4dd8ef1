package head

import "github.com/tsd-db/tsd/uid"

// memoNames bounds a NameAppender's memo of resolved names; a full memo
// is emptied and fills again with the names still in use.
const memoNames = 4096

// nameMemo remembers the UIDs of names a NameAppender resolved, for
// points whose series it does not remember (more series than it keeps,
// or a first sighting): the metric, the tag keys and the tag values many
// series share come up in every such point, and uid's shared cache
// answers each under its shard's read lock, whose cache line two cores
// resolving the same hot names pass back and forth (on 100,000 series of
// ten tags, 23 % of the ingest CPU was that lock's atomic add). A memo
// answer is only as fresh as the appender's remembered series: both are
// dropped together (DropCache) when the UIDs change.
type nameMemo struct {
	m [uid.NumKinds]map[string]uid.ID
	n int
}

func (m *nameMemo) get(kind uid.Kind, name []byte) (uid.ID, bool) {
	id, ok := m.m[kind][string(name)]
	return id, ok
}

func (m *nameMemo) put(kind uid.Kind, name []byte, id uid.ID) {
	if m.n >= memoNames {
		m.reset()
	}
	if m.m[kind] == nil {
		m.m[kind] = make(map[string]uid.ID)
	}
	m.m[kind][string(name)] = id
	m.n++
}

func (m *nameMemo) reset() {
	if m.n == 0 {
		return
	}
	for k := range m.m {
		clear(m.m[k])
	}
	m.n = 0
}
