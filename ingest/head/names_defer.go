package head

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// Bounds of a NameAppender's deferred points: when either is reached the
// deferred names are assigned and the points appended, before Commit.
const (
	// DeferredPoints is the most points a NameAppender defers.
	DeferredPoints = 4096
	// DeferredNames is the most distinct new names a NameAppender defers.
	DeferredNames = 1000
)

// deferral holds the points waiting for their names' UIDs.
type deferral struct {
	// ctx is the context of the last deferred Append, which Commit
	// resolves with.
	ctx    context.Context
	points []deferredPoint
	// buf holds the deferred points' name keys (appendNameKey), in order.
	buf []byte
	// fresh holds, per kind, the distinct uncached names of the deferred
	// points, and order the same in order of first appearance (the order
	// they get UIDs in); nfresh counts them over all kinds.
	fresh  [uid.NumKinds]map[string]struct{}
	order  [uid.NumKinds][]string
	nfresh int
	// miss lists the uncached names of the point being appended.
	miss []missName
	// Scratch of flush.
	names [][]byte
	ids   []uid.ID
	tags  []uid.Tag
}

type deferredPoint struct {
	start, end int // name key in buf
	p          series.Point
	adm        admission
}

type missName struct {
	kind uid.Kind
	name []byte
}

func (d *deferral) reset() {
	d.ctx = nil
	d.points = d.points[:0]
	d.buf = d.buf[:0]
	if d.nfresh > 0 {
		for k := range d.fresh {
			clear(d.fresh[k])
			clear(d.order[k])
			d.order[k] = d.order[k][:0]
		}
		d.nfresh = 0
	}
}

// resolveKnown sorts tags, checks every name and appends the UIDs of the
// point's names to dst as uid.ResolvePoint does, without assigning any:
// known=false means a name of an auto-creating kind has no UID yet (it is
// listed in n.d.miss) and dst is incomplete. An unknown name of a kind that
// does not auto-create is the point's error at once, as before. Errors
// come in ResolvePoint's order.
func (n *NameAppender) resolveKnown(ctx context.Context, dst, metric []byte, tags []uid.Tag) (key []byte, known bool, err error) {
	n.d.miss = n.d.miss[:0]
	if err := uid.SortTags(tags); err != nil {
		return dst, false, err
	}
	if dst, err = n.resolveName(ctx, dst, uid.Metric, metric); err != nil {
		return dst, false, err
	}
	for i := range tags {
		if dst, err = n.resolveName(ctx, dst, uid.TagK, tags[i].Key); err != nil {
			return dst, false, err
		}
		if dst, err = n.resolveName(ctx, dst, uid.TagV, tags[i].Value); err != nil {
			return dst, false, err
		}
	}
	return dst, len(n.d.miss) == 0, nil
}

// resolveName appends the UID of name. An uncached name is looked up in
// the store now (a read, bounded by the UID table's StoreTimeout, so an
// unreachable store is this point's retryable error as before); only its
// assignment, several synced writes, is deferred.
func (n *NameAppender) resolveName(ctx context.Context, dst []byte, kind uid.Kind, name []byte) ([]byte, error) {
	if !n.u.AutoCreate(kind) {
		id, err := n.u.Resolve(ctx, kind, name)
		return n.u.AppendID(dst, kind, id), err
	}
	if id, ok := n.memo.get(kind, name); ok { // found, so never fresh
		return n.u.AppendID(dst, kind, id), nil
	}
	if _, ok := n.d.fresh[kind][string(name)]; ok {
		n.d.miss = append(n.d.miss, missName{kind, name}) // found new already
		return n.u.AppendID(dst, kind, 0), nil
	}
	id, found, err := n.u.Find(ctx, kind, name)
	if err != nil {
		return dst, err
	}
	if !found {
		n.d.miss = append(n.d.miss, missName{kind, name})
	} else {
		n.memo.put(kind, name, id)
	}
	return n.u.AppendID(dst, kind, id), nil
}

// checkPoint refuses, before the point may be deferred, what the head
// would refuse once its names are resolved, with the head's wording.
func (n *NameAppender) checkPoint(ntags int, p series.Point) error {
	if ntags > n.maxTags {
		return fmt.Errorf("%w: %d tags, at most %d", ErrBadSeriesKey, ntags, n.maxTags)
	}
	if p.T < 0 || p.T > MaxTimestamp || p.Kind > series.Float64 {
		return fmt.Errorf("%w: timestamp %d, kind %d", ErrOutOfBounds, p.T, p.Kind)
	}
	return nil
}

// deferPoint keeps p (named by n.name) until its new names are assigned,
// and assigns them now if the deferral is full.
func (n *NameAppender) deferPoint(ctx context.Context, p series.Point, adm admission) error {
	d := &n.d
	for _, m := range d.miss {
		set := d.fresh[m.kind]
		if set == nil {
			set = make(map[string]struct{})
			d.fresh[m.kind] = set
		}
		if _, ok := set[string(m.name)]; !ok {
			name := string(m.name)
			set[name] = struct{}{}
			d.order[m.kind] = append(d.order[m.kind], name)
			d.nfresh++
		}
	}
	d.ctx = ctx
	start := len(d.buf)
	d.buf = append(d.buf, n.name...)
	d.points = append(d.points, deferredPoint{start: start, end: len(d.buf), p: p, adm: adm})
	if len(d.points) >= DeferredPoints || d.nfresh >= DeferredNames {
		return n.flush(ctx)
	}
	return nil
}

// flush assigns the deferred names, one batch per kind in OpenTSDB's order
// (metrics, tag keys, tag values), then appends the deferred points in
// their order. On error the deferred points are dropped and the error is
// kept for Commit.
func (n *NameAppender) flush(ctx context.Context) error {
	err := n.resolveDeferred(ctx)
	if err == nil {
		err = n.appendDeferred(ctx)
	}
	n.d.reset()
	if err != nil {
		n.err = err
	}
	return err
}

func (n *NameAppender) resolveDeferred(ctx context.Context) error {
	d := &n.d
	for _, k := range uid.Kinds {
		if len(d.order[k]) == 0 {
			continue
		}
		d.names = d.names[:0]
		for _, name := range d.order[k] {
			d.names = append(d.names, []byte(name))
		}
		if cap(d.ids) < len(d.names) {
			d.ids = make([]uid.ID, len(d.names))
		}
		if err := n.u.ResolveNewBatch(ctx, k, d.names, d.ids[:len(d.names)]); err != nil {
			return err
		}
	}
	clear(d.names)
	return nil
}

// appendDeferred appends the deferred points, whose names now resolve
// from the cache.
func (n *NameAppender) appendDeferred(ctx context.Context) error {
	d := &n.d
	for _, dp := range d.points {
		n.name = append(n.name[:0], d.buf[dp.start:dp.end]...)
		if i, ok := n.refs[string(n.name)]; ok {
			if err := n.a.Append(n.ents[i].ref, dp.p); err != nil {
				return err
			}
			continue
		}
		metric, tags, err := parseNameKey(n.name, d.tags[:0])
		d.tags = tags
		if err != nil {
			return err
		}
		key, err := n.u.ResolvePoint(ctx, n.key[:0], metric, tags)
		n.key = key
		if err != nil {
			return err
		}
		if _, err := n.appendResolved(key, dp.p, dp.adm, nil); err != nil {
			return err
		}
	}
	return nil
}

var errBadNameKey = errors.New("ingest: malformed deferred name key")

// parseNameKey splits a key of appendNameKey back into the metric and
// tags, aliasing key.
func parseNameKey(key []byte, tags []uid.Tag) (metric []byte, _ []uid.Tag, err error) {
	next := func() ([]byte, bool) {
		l, n := binary.Uvarint(key)
		if n <= 0 || uint64(len(key)-n) < l {
			return nil, false
		}
		v := key[n : n+int(l)]
		key = key[n+int(l):]
		return v, true
	}
	metric, ok := next()
	for ok && len(key) > 0 {
		var t uid.Tag
		if t.Key, ok = next(); ok {
			t.Value, ok = next()
		}
		tags = append(tags, t)
	}
	if !ok {
		return nil, tags, errBadNameKey
	}
	return metric, tags, nil
}
