package ingest

import (
	"context"
	"encoding/binary"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/uid"
)

// DefaultNameCacheSize is the number of series a NameAppender remembers.
const DefaultNameCacheSize = 1 << 16

// NameAppender appends points given by name, as the protocol parsers hand
// them over: it resolves the metric and tags to a series through the UID
// table (uid.ResolvePoint, which assigns UIDs to new names) and remembers
// the result by name, so a series seen before costs one hash lookup rather
// than a UID lookup per name. Use one per connection, as Appender; not safe
// for concurrent use.
//
// The cache holds up to its size of series, keyed by the names in the
// order given, and is emptied whole when full. Like the UID caches it does
// not see another daemon's UID renames or deletes until DropCache (called
// with uid.UIDs.DropCaches).
type NameAppender struct {
	a    *Appender
	u    *uid.UIDs
	w    series.Widths
	refs map[string]SeriesRef
	max  int
	name []byte // cache key scratch
	key  []byte // series key scratch
}

// NameAppender returns an appender resolving names through u, remembering
// up to cacheSize series (DefaultNameCacheSize when 0). u's widths must be
// the head's.
func (h *Head) NameAppender(u *uid.UIDs, cacheSize int) *NameAppender {
	if cacheSize <= 0 {
		cacheSize = DefaultNameCacheSize
	}
	return &NameAppender{a: h.Appender(), u: u, w: h.opts.Widths, refs: make(map[string]SeriesRef), max: cacheSize}
}

// Append adds p to the series named by metric and tags and returns its
// reference. On a cache miss tags are sorted in place by key (see
// uid.ResolvePoint) and errors are ResolvePoint's (unknown or invalid names,
// storage failures) or the head's. The point is neither durable nor visible
// until Commit. metric and tags are not retained.
func (n *NameAppender) Append(ctx context.Context, metric []byte, tags []uid.Tag, p series.Point) (SeriesRef, error) {
	n.name = appendNameKey(n.name[:0], metric, tags)
	if ref, ok := n.refs[string(n.name)]; ok {
		return ref, n.a.Append(ref, p)
	}
	key, err := n.u.ResolvePoint(ctx, n.key[:0], metric, tags)
	n.key = key
	if err != nil {
		return 0, err
	}
	SortSeriesKey(key, n.w)
	ref, err := n.a.AppendKey(key, p)
	if err != nil {
		return 0, err
	}
	if len(n.refs) >= n.max {
		clear(n.refs)
	}
	n.refs[string(n.name)] = ref
	return ref, nil
}

// appendNameKey appends the cache key of a series' names: each name with
// its length before it, so no two series share a key.
func appendNameKey(dst, metric []byte, tags []uid.Tag) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(metric)))
	dst = append(dst, metric...)
	for _, t := range tags {
		dst = binary.AppendUvarint(dst, uint64(len(t.Key)))
		dst = append(dst, t.Key...)
		dst = binary.AppendUvarint(dst, uint64(len(t.Value)))
		dst = append(dst, t.Value...)
	}
	return dst
}

// Commit is Appender.Commit.
func (n *NameAppender) Commit(sync bool) error { return n.a.Commit(sync) }

// Rollback drops the points waiting for Commit.
func (n *NameAppender) Rollback() { n.a.Rollback() }

// Len returns the number of points waiting for Commit.
func (n *NameAppender) Len() int { return n.a.Len() }

// DropCache forgets every remembered series.
func (n *NameAppender) DropCache() { clear(n.refs) }
