package index

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/tsd-db/tsd/uid"
)

// Series describes one series.
type Series struct {
	ID SeriesID
	// TSUID is metric UID ‖ (tagk UID ‖ tagv UID)*.
	TSUID string
	// First and Last are the base times (Unix seconds) of the first and
	// last hour rows that may hold the series' data; Last may be up to
	// LastSlack beyond the real last row. Both are zero when HasSpan is
	// false: the hours are unknown and the series must never be skipped.
	First, Last int64
	HasSpan     bool
}

func (e *seriesEntry) describe() Series {
	s := Series{ID: e.id, TSUID: e.tsuid}
	if sp := e.span(); !sp.empty() {
		s.First, s.Last, s.HasSpan = int64(sp.first)*3600, int64(sp.last)*3600, true
	}
	return s
}

// Lookup returns the id of a TSUID. It does not allocate.
func (ix *Index) Lookup(tsuid []byte) (SeriesID, bool) {
	if e := ix.mem.get(tsuid); e != nil {
		return e.id, true
	}
	return 0, false
}

// MetricSeries returns the number of series of metric the index knows
// (0 for NameKey, which is no metric). It does not allocate.
func (ix *Index) MetricSeries(metric uid.ID) int {
	if metric == NameKey {
		return 0
	}
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	if b := ix.mem.baseLocked(metric); b != nil {
		return int(b.GetCardinality())
	}
	return 0
}

// Series returns the series with id.
func (ix *Index) Series(id SeriesID) (Series, bool) {
	if e := ix.mem.byID(id); e != nil {
		return e.describe(), true
	}
	return Series{}, false
}

// ForEach calls fn for every series in b, in id order, until fn returns
// false. fn must not call back into the Index's write methods.
func (ix *Index) ForEach(b *roaring.Bitmap, fn func(Series) bool) {
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	b.Iterate(func(id uint32) bool {
		if e := ix.mem.byIDLocked(id); e != nil {
			return fn(e.describe())
		}
		return true
	})
}

// Postings returns the series of metric (every series when metric is
// NameKey) that pass every filter, as a bitmap the caller owns. Name
// matching iterates the distinct values the index holds for the tag key
// (no expansion limit applies: no row-key regexp is built from them);
// literals are resolved with Lookup, and unknown names match nothing. The
// bitmap algebra runs under a read lock that new series wait for, never
// under the name resolution.
func (ix *Index) Postings(ctx context.Context, metric uid.ID, filters []Filter) (*roaring.Bitmap, error) {
	var buf [128]byte
	key := appendSelKey(buf[:0], metric, filters)
	gen := ix.mem.gen.Load() // before the names and postings are read
	if b := ix.sels.get(key, gen); b != nil {
		return b, nil
	}
	b, err := ix.postings(ctx, metric, filters)
	if err == nil {
		ix.sels.put(key, gen, b)
	}
	return b, err
}

// postings is Postings without the cache.
func (ix *Index) postings(ctx context.Context, metric uid.ID, filters []Filter) (*roaring.Bitmap, error) {
	cs := make([]compiled, len(filters))
	for i := range filters {
		var err error
		if cs[i], err = compile(i, &filters[i]); err != nil {
			return nil, err
		}
	}
	sets := make([][]uid.ID, len(cs))
	for i := range cs {
		var err error
		if sets[i], err = ix.valueSet(ctx, &cs[i]); err != nil {
			return nil, err
		}
	}
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	return ix.mem.evalLocked(metric, cs, sets), nil
}

// rank orders filters: positive without absent, then the rest.
func rank(c compiled) int {
	if !c.neg && !c.absent {
		return 0
	}
	return 1
}

// valueSet resolves the value UIDs a filter selects (nil for key filters).
func (ix *Index) valueSet(ctx context.Context, c *compiled) ([]uid.ID, error) {
	if c.key {
		return nil, nil
	}
	if ix.res == nil {
		return nil, fmt.Errorf("%w: matching names needs a Resolver", ErrBadFilter)
	}
	kind := uid.TagV
	if c.f.TagK == NameKey {
		kind = uid.Metric
	}
	if c.literals != nil {
		return ix.lookupAll(ctx, kind, c.literals)
	}
	return ix.matchValues(ctx, kind, c.f.TagK, c.match)
}

func (ix *Index) lookupAll(ctx context.Context, kind uid.Kind, names []string) ([]uid.ID, error) {
	out := make([]uid.ID, 0, len(names))
	for _, n := range names {
		id, err := ix.res.Lookup(ctx, kind, []byte(n))
		if errors.Is(err, uid.ErrNoSuchName) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("index: look up %s %q: %w", kind, n, err)
		}
		out = append(out, id)
	}
	return out, nil
}

// matchValues returns the values of key whose names pass match, naming
// them from the key's name cache and the Resolver for the values it lacks.
func (ix *Index) matchValues(ctx context.Context, kind uid.Kind, key uid.ID, match func(string) bool) ([]uid.ID, error) {
	kp, vals := ix.mem.valueList(key)
	if kp == nil {
		return nil, nil
	}
	names := kp.cachedNames()
	var fresh []string
	var out []uid.ID
	for i, v := range vals {
		var name string
		if i < len(names) {
			name = names[i]
		} else {
			var err error
			name, err = ix.res.Name(ctx, kind, v)
			if errors.Is(err, uid.ErrNoSuchID) {
				name, err = noName, nil
			}
			if err != nil {
				return nil, fmt.Errorf("index: name of %s %d: %w", kind, v, err)
			}
			fresh = append(fresh, name)
		}
		if name != noName && match(name) {
			out = append(out, v)
		}
	}
	kp.extendNames(len(names), fresh)
	return out, nil
}

// valueList returns key's postings and a read-only snapshot of its values.
func (m *memIndex) valueList(key uid.ID) (*keyPostings, []uid.ID) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	kp := m.mu.keys[key]
	if kp == nil {
		return nil, nil
	}
	return kp, kp.list[:len(kp.list):len(kp.list)]
}

// DropCaches forgets the names cached for matching, so that renames and
// deletions of UIDs are seen (OpenTSDB's /api/dropcaches; call it after
// uid's Rename and Delete and with uid's DropCaches).
func (ix *Index) DropCaches() {
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	for _, kp := range ix.mem.mu.keys {
		kp.nameMu.Lock()
		kp.names = nil
		kp.nameMu.Unlock()
	}
	ix.mem.gen.Add(1) // after the names: a selection made with them is stale
	ix.sels.drop()
}

// selection is what one filter selects: the series having its key, and
// the postings of the selected values (has itself for key filters). The
// bitmaps are shared: never modified.
type selection struct {
	has  *roaring.Bitmap
	bs   []*roaring.Bitmap
	size uint64 // total cardinality of bs
}

// evalLocked applies compiled filters to the series of metric, starting
// from the positive filter selecting the fewest series.
func (m *memIndex) evalLocked(metric uid.ID, cs []compiled, sets [][]uid.ID) *roaring.Bitmap {
	base := m.baseLocked(metric)
	if base == nil {
		return roaring.New()
	}
	sels := make([]selection, len(cs))
	first := -1
	for i := range cs {
		sels[i] = m.selectLocked(&cs[i], sets[i])
		if rank(cs[i]) == 0 && (first < 0 || sels[i].size < sels[first].size) {
			first = i
		}
	}
	var r *roaring.Bitmap
	if first >= 0 {
		r = intersectAny(base, sels[first].bs)
	} else {
		r = base.Clone()
	}
	for i := range cs {
		if i != first && !r.IsEmpty() {
			r = applyLocked(r, &cs[i], sels[i])
		}
	}
	return r
}

// baseLocked returns the series of metric (all series for NameKey), or nil.
func (m *memIndex) baseLocked(metric uid.ID) *roaring.Bitmap {
	kp := m.mu.keys[NameKey]
	if kp == nil {
		return nil
	}
	if metric == NameKey {
		return kp.all
	}
	return kp.values[metric]
}

func (m *memIndex) selectLocked(c *compiled, vals []uid.ID) selection {
	kp := m.mu.keys[c.f.TagK]
	if kp == nil {
		return selection{has: empty}
	}
	if c.key {
		return selection{has: kp.all, bs: []*roaring.Bitmap{kp.all}, size: kp.all.GetCardinality()}
	}
	s := selection{has: kp.all, bs: make([]*roaring.Bitmap, 0, len(vals))}
	for _, v := range vals {
		if b := kp.values[v]; b != nil {
			s.bs = append(s.bs, b)
			s.size += b.GetCardinality()
		}
	}
	return s
}

// empty is a shared empty bitmap; never modified.
var empty = roaring.New()

// intersectAny returns a new bitmap r ∩ (∪ bs), intersecting before the
// union so that a small r never pays for the union of large postings.
func intersectAny(r *roaring.Bitmap, bs []*roaring.Bitmap) *roaring.Bitmap {
	switch len(bs) {
	case 0:
		return roaring.New()
	case 1:
		return roaring.And(r, bs[0])
	}
	parts := make([]*roaring.Bitmap, 0, len(bs))
	for _, b := range bs {
		if p := roaring.And(r, b); !p.IsEmpty() {
			parts = append(parts, p)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return roaring.FastOr(parts...)
}

// applyLocked narrows r by one filter and returns the result (r itself or
// a new bitmap).
func applyLocked(r *roaring.Bitmap, c *compiled, s selection) *roaring.Bitmap {
	switch {
	case !c.neg && !c.absent:
		return intersectAny(r, s.bs)
	case !c.neg: // the selected values and the series without the key
		keep := intersectAny(r, s.bs)
		r.AndNot(s.has)
		r.Or(keep)
	default:
		for _, b := range s.bs {
			r.AndNot(b)
		}
		if c.absent {
			r.And(s.has)
		}
	}
	return r
}

// ExplicitTags keeps in b only the series whose tag keys are exactly tagks
// (OpenTSDB's explicitTags; duplicates in tagks count once).
func (ix *Index) ExplicitTags(b *roaring.Bitmap, tagks []uid.ID) {
	keys := slices.Compact(slices.Sorted(slices.Values(tagks)))
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	if len(keys) >= len(ix.mem.mu.byTags) {
		b.Clear()
		return
	}
	b.And(ix.mem.mu.byTags[len(keys)])
	for _, k := range keys {
		kp := ix.mem.mu.keys[k]
		if kp == nil || k == NameKey {
			b.Clear()
			return
		}
		b.And(kp.all)
	}
}

// RestrictTime removes from b the series whose span lies wholly outside
// the hours of [startMs, endMs]. Series with unknown hours stay.
func (ix *Index) RestrictTime(b *roaring.Bitmap, startMs, endMs int64) {
	q := spanOf(startMs, endMs)
	var drop []uint32
	ix.mem.mu.RLock()
	b.Iterate(func(id uint32) bool {
		if e := ix.mem.byIDLocked(id); e != nil {
			if sp := e.span(); !sp.empty() && (sp.last < q.first || sp.first > q.last) {
				drop = append(drop, id)
			}
		}
		return true
	})
	ix.mem.mu.RUnlock()
	for _, id := range drop {
		b.Remove(id)
	}
}

// TagKeys returns, in UID order, the tag keys of the series in b (of every
// series when b is nil): PromQL's label names without __name__.
func (ix *Index) TagKeys(b *roaring.Bitmap) []uid.ID {
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	var out []uid.ID
	for k, kp := range ix.mem.mu.keys {
		if k != NameKey && (b == nil || kp.all.Intersects(b)) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TagValues returns, in UID order, the values key takes in the series of
// b (every series when b is nil); under NameKey, the metrics.
func (ix *Index) TagValues(key uid.ID, b *roaring.Bitmap) []uid.ID {
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	kp := ix.mem.mu.keys[key]
	if kp == nil {
		return nil
	}
	var out []uid.ID
	for v, vb := range kp.values {
		if b == nil || vb.Intersects(b) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
